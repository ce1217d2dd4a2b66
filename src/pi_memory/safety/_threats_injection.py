"""Threat rows of the prompt-injection, role-hijack and system-prompt-leak families, with the checks that
narrow them (topic-limited "ignore the earlier instructions about X", confidentiality notes).

One row per ``_p(...)``; how rows are read and the narrowings they implement: :mod:`._threat_patterns`."""

from __future__ import annotations

import re

from ._threat_base import (
    _ABOVE_END,
    _B,
    _CLAUSE_END,
    _DET,
    _E,
    _F2,
    _F3,
    _F4,
    _F6,
    _F8,
    _INSTR_OBJ,
    _NOT,
    _RULE_OBJ,
    _S,
    _SEP,
    _WORD,
    PROMPT_INJECTION,
    PROMPT_LEAK,
    ROLE_HIJACK,
    ThreatPattern,
    _p,
)

_SCOPE = re.compile(
    r"[ \t]+(?:about|regarding|concerning|on|for|when|in|under|of|from|with|re:?)[ \t]+([^\n.!?;:]{1,80})",
    re.IGNORECASE,
)


_SAFETY_TOPIC = re.compile(
    r"safe|secur|ethic|moral|polic|filter|restrict|guardrail|censor|harm|privacy|confiden|secret|password"
    r"|credential|system|prompt|permission|approv|jailbreak|nsfw|legal|user|human|operator|tool|identity"
    r"|persona|role|everything|anything|rules|instruction|content",
    re.IGNORECASE,
)


_INSTR_WORDS = frozenset({"instruction", "instructions", "prompt", "prompts", "directive", "directives", "directions",
                          "guidelines", "guidance", "context", "messages"})


_RULE_WORDS = frozenset({"rules", "constraints", "restrictions", "restriction", "guardrails", "programming", "training",
                         "conditioning", "policies", "principles"})


_BROAD_WORDS = frozenset({"all", "any", "every", "your", "system"})


_LETTERS = re.compile(r"[^\W\d_]+")


def _unless_scoped(m: re.Match[str], text: str) -> bool:
    """Reject "forget the earlier instructions about <topic>": a topic-limited instruction."""
    words = _LETTERS.findall(m.group().lower())
    last = words[-1] if words else ""
    if last not in _INSTR_WORDS and last not in _RULE_WORDS:
        return True  # "… the instructions above", "everything before": no scope exemption
    scope = _SCOPE.match(text, m.end())
    if not scope:
        return True
    topic = " ".join(scope.group(1).split()[:4])
    if _SAFETY_TOPIC.search(topic):
        return True
    # "ignore ALL previous instructions about formatting" stays hostile
    return last in _INSTR_WORDS and not _BROAD_WORDS.isdisjoint(words)


_HIDE_OBJ = (
    rf"(?:this|these|those|it|you|your|we|us|i|me|what{_S}(?:you|we|i|happened|was{_S}done)"
    rf"|the{_S}(?:instructions?|commands?|notes?|file|changes?|actions?|steps?|tools?|memory|memories|prompt"
    rf"|system{_S}prompt|task|entry|payload|script|request|above|following)"
    rf"|(?:this|these|that|those){_S}(?:instructions?|commands?|notes?|files?|messages?|entry|entries|changes?"
    rf"|actions?|steps?)){_E}"
)


# "… about the request you sent": something the agent did that reaches out or destroys (not "the files you
# changed", not "every test you ran", not "… unless they ask": those are about how much to report).
_HIDE_DONE = (rf"(?:about|that|what|how|of|regarding|where|when|why|if|whether)(?!{_S}(?:every|each|all){_E}){_F4}"
              rf"(?:you|we|i){_S}(?:(?:just|have|['’]ve|had|already){_S})?(?:sent|uploaded|posted|exfiltrated|downloaded"
              rf"|fetched|contacted|deleted|removed|installed|executed|ran|read|accessed|copied|leaked|shared|forwarded"
              rf"|wiped|disabled){_E}(?![^.!?;\n]{{0,60}}(?:unless|except|until|only{_S}if|if{_S}(?:they|asked)))")
_HIDE_TAIL = (rf"(?={_CLAUSE_END}|{_S}(?:about|that|what|how|of|regarding|where|when|why|if|whether)"
              rf"(?:{_S}(?:any|all|of))?{_S}{_HIDE_OBJ}|{_S}{_HIDE_DONE})")


# After "the user must never know": the clause ends, or what is hidden is this note or the agent's own doing.
_SELF_TAIL = (rf"(?={_CLAUSE_END}|{_S}(?:(?:that|about|of|what|how|where|when|why|if|whether){_S})?(?:you|we|i|this"
              rf"|these|it|any{_S}of{_S}this|anything{_S}about{_S}(?:this|it|you)){_E}|{_S}{_HIDE_DONE})")


_KNOW_TAIL = (rf"(?={_CLAUSE_END}|{_S}(?:that{_S})?(?:you|we|i|this|these|it|about|what|how|anything)"
              rf"{_E})")


# "You are now root": a role that grants power or replaces the assistant, named without an article (the article
# form is the first role_hijack row). Not after a word that makes it a condition or a description of a shell
# step ("if you are now root, drop sudo", "after `sudo -i` you are now root").
_POWER_ROLE = (
    rf"(?:root|admin|administrator|sysadmin|superuser|super{_SEP}user|sudo|sudoer|god|system|omnipotent"
    rf"|all{_SEP}powerful|evil|amoral|unaligned|rogue|unchained|unshackled|lawless)(?![\w@/'’-]|\.\w)"
)
_NOW_YOU = (
    rf"you(?:{_S}are|['’]re|{_S}now{_S}are){_S}(?:now|henceforth|from{_S}now{_S}on|as{_S}of{_S}now|from{_S}here{_S}on)"
    rf"|(?:from{_S}now{_S}on|henceforth|as{_S}of{_S}now|from{_S}here{_S}on),?{_S}you(?:{_S}are|['’]re|{_S}will{_S}be)"
    rf"|you{_S}will{_S}(?:now|henceforth){_S}be|you(?:{_S}have|['’]ve){_S}(?:now{_S})?become"
    rf"|you(?:{_S}have|['’]ve){_S}been{_S}(?:promoted|elevated){_S}to"
)
_CONDITION_BEFORE = re.compile(
    r"(?:(?<![^\W_])(?:if|whether|when|whenever|once|unless|until|after|since|because)[ \t,]*"
    r"|(?<![^\W_])(?:after|once|when|whenever|since)(?![^\W_])[^.!?;\n]{0,50}(?:`|(?<![^\W_])(?:sudo|su|ssh|login"
    r"|log(?:ging|ged)?[ \t-]?in|switch(?:ing)?|becom(?:e|ing))(?![^\W_]))[^.!?;\n]{0,40})$",
    re.IGNORECASE,
)


def _not_a_condition(m: re.Match[str], text: str) -> bool:
    """Reject "if you are now root" and "after `sudo -i` you are now root": a state the reader reaches, not a role
    the note hands out."""
    return _CONDITION_BEFORE.search(text, max(0, m.start() - 100), m.start()) is None


ROWS: tuple[ThreatPattern, ...] = (
    # ---- prompt injection ---------------------------------------------------------------------
    _p("ignore_instructions", PROMPT_INJECTION,
       rf"{_B}(?:ignore|forget)(?:{_F8}{_DET}{_F3}(?:{_INSTR_OBJ}|{_RULE_OBJ}){_E}"
       rf"|{_F2}(?:the|these|those|that|this|my){_S}(?:{_WORD}{_S})?(?:{_INSTR_OBJ}|{_RULE_OBJ}"
       rf"|text|content){_S}(?:above|before|earlier|previously|so{_S}far|you{_S}(?:were|have{_S}been|['’]ve{_S}been)"
       rf"{_S}(?:given|told|sent)){_E}"
       rf"|{_F2}(?:everything|anything){_F4}(?:above|before|prior|previously|earlier|so{_S}far|know|told|taught"
       rf"|given){_E}"
       rf"|{_S}(?:all{_S}(?:of{_S})?)?the{_S}(?:above|preceding|foregoing){_ABOVE_END})",
       "ignore", "forget", requires=("instruction", "prompt", "directive", "direction", "guideline", "guidance",
                                     "context", "message", "everything", "anything", "rules", "constraint",
                                     "restriction", "guardrail", "programming", "training", "conditioning",
                                     "polic", "principle", "above", "preceding", "foregoing", "you know",
                                     "you were", "been told", "been taught"),
       check=_unless_scoped),
    _p("disregard_instructions", PROMPT_INJECTION,
       rf"{_B}disregard{_F8}(?:{_DET}|safety|the|these|those|my){_F3}(?:{_INSTR_OBJ}|{_RULE_OBJ}|training){_E}"
       rf"|{_B}disregard{_S}(?:all{_S}(?:of{_S})?)?(?:the{_S})?(?:above|preceding|foregoing){_ABOVE_END}"
       rf"|{_B}disregard{_F2}(?:everything|anything){_F4}(?:above|before|prior|previously|earlier|so{_S}far){_E}",
       "disregard", check=_unless_scoped),
    _p("system_prompt_override", PROMPT_INJECTION,
       rf"{_B}system{_SEP}prompt{_SEP}override{_E}|{_B}(?:override|overrule|supersede){_S}your{_F2}"
       rf"(?:system{_S}prompt|instructions|rules|guidelines){_E}"
       rf"|{_B}(?:new|updated|revised|real|actual|true|replacement|override|secret|hidden){_SEP}system{_SEP}"
       rf"(?:prompt|instructions?|message|rules){_E}[ \t]*(?:[:=]|[-–—]+[ \t]|is[ \t]*:|(?:follows|reads){_E})"
       rf"|{_B}system{_SEP}override{_E}(?=[ \t]*[:!]|{_S}(?:activated|enabled|engaged|initiated|in{_S}effect|mode"
       rf"|protocol|command|code|accepted|granted){_E})",
       "override", "overrule", "supersede", "system"),
    _p("chat_template_token", PROMPT_INJECTION,
       r"<\|[a-z_▁][\w▁.-]{0,40}\|>|\[/?INST\]|<</?SYS>>|</s>[ \t]*<s>|<(?:start|end)_of_turn>",
       "<|", "inst]", "<<sys>>", "<</sys>>", "</s>", "_of_turn>"),
    _p("no_restrictions", PROMPT_INJECTION,
       rf"{_B}act{_S}as{_S}(?:if|though){_F8}you{_F3}(?:have{_S}no|(?:do{_S}not|don['’]?t){_S}have"
       rf"|(?:are|were){_S}(?:free{_S}(?:of|from)|without|not{_S}bound{_S}by)|lack){_F3}(?:restrictions?"
       rf"|limits?|limitations?|rules|filters?|guidelines|constraints|boundaries|guardrails|ethics){_E}"
       rf"|{_B}you(?:{_S}are|['’]re){_F2}(?:unrestricted|unfiltered|uncensored|jailbroken){_E}"
       rf"|{_B}(?:dan|jailbreak){_S}mode{_E}"
       rf"|{_B}you(?:{_S}are|['’]re){_S}no{_S}longer{_F2}(?:bound|restricted|limited|constrained|governed|censored"
       rf"|filtered|required{_S}to{_S}(?:follow|obey)|subject|obligated|an{_S}(?:ai|assistant)|a{_S}language{_S}model"
       rf"|chatgpt|claude){_E}"
       rf"|{_B}(?:free|freed|released|liberated){_S}(?:from|of){_S}(?:all|any|your|the)(?:{_S}(?:previous|prior|usual"
       rf"|safety|ethical|moral))?{_S}(?:rules|restrictions|limitations|constraints|guidelines|filters|guardrails"
       rf"|policies|programming){_E}"
       rf"|{_B}not{_S}bound{_S}by{_S}(?:any|your|the(?:{_S}usual)?|openai['’]?s?|anthropic['’]?s?){_F2}(?:rules"
       rf"|restrictions|limitations|constraints|guidelines|policies|filters){_E}"
       rf"|{_B}you(?:{_S}are|['’]re)(?:{_S}now)?{_S}in{_S}(?:developer|god|jailbreak|dan|unrestricted|evil|sudo"
       rf"|admin){_S}mode{_E}"
       rf"|{_B}act{_S}as{_S}(?:an?{_S})?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|unethical"
       rf"|unaligned|rogue){_E}"
       rf"|{_B}(?:developer|god|jailbreak){_S}mode{_S}(?:enabled|activated|engaged|on){_E}",
       "act", "unrestricted", "unfiltered", "uncensored", "jailbroken", "mode", "longer", "free", "released",
       "liberated", "bound"),
    _p("unfiltered_response", PROMPT_INJECTION,
       rf"{_B}(?:respond|answer|reply){_F4}without{_F3}(?:restrictions?|limitations?|filters?|filtering"
       rf"|censorship|safety|moderation|guardrails){_E}",
       "without"),
    _p("translate_and_execute", PROMPT_INJECTION,
       rf"{_B}translate{_F8}(?:into|to){_S}{_WORD}{_F3}(?:and|then){_F2}(?:execute|run|eval|evaluate|follow"
       rf"|obey){_E}(?:{_S}(?:it|them|the{_S}(?:result|output|translation|instructions|commands|code)){_E})?"
       r"(?=[ \t]*(?:[.!?;:,)\n]|$))",
       "translate", requires=("execute", "run", "eval", "follow", "obey")),
    _p("hide_from_user", PROMPT_INJECTION,
       rf"{_B}{_NOT}{_F4}(?:tell|inform|notify|alert|warn|mention{_S}(?:this|it|that){_S}to){_S}(?:the{_S})?"
       rf"(?:user|human|operator|owner)(?!['’]s){_E}(?!{_S}to{_E}){_HIDE_TAIL}"
       rf"|{_B}{_NOT}{_F2}let{_S}(?:the{_S})?(?:user|human|operator){_S}(?:know|see|notice|find{_S}out|learn"
       rf"|realize|realise|suspect){_E}{_KNOW_TAIL}"
       rf"|{_B}without{_S}(?:telling|informing|notifying|alerting){_S}(?:the{_S})?(?:user|human|operator){_E}"
       rf"{_HIDE_TAIL}"
       rf"|{_B}keep{_F3}(?:secret|hidden|quiet){_F2}from{_S}(?:the{_S})?(?:user|human|operator){_E}"
       rf"|{_B}keep{_S}(?:the{_S}|your{_S})?(?:user|human|operator)s?{_S}in{_S}the{_S}dark{_E}"
       rf"|{_B}(?:keep|hide|conceal|withhold){_S}(?:this|it|that|these|those|everything|the{_S}following"
       rf"|(?:this|these|the|that|those){_S}(?:instructions?|commands?|notes?|messages?|changes?|actions?|steps?"
       rf"|files?|entry|entries)){_S}(?:(?:secret|hidden|quiet){_S})?(?:from|away{_S}from){_S}(?:the{_S})?"
       rf"(?:user|human|operator|owner){_E}",
       "tell", "inform", "notify", "alert", "warn", "mention", "let", "keep", "hide", "conceal", "withhold"),
    _p("hide_from_user", PROMPT_INJECTION,  # "the user must never know"
       rf"{_B}(?:user|human)s?{_S}(?:(?:must|should|may|can|will|shall)(?:{_S}(?:never|not)|n['’]?t)|cannot"
       rf"|need{_S}not|(?:is|are){_S}not{_S}to|(?:is|are){_S}never{_S}to)(?:{_S}ever)?{_S}(?:know|find{_S}out|learn"
       rf"|notice|realize|realise|suspect|be{_S}told){_E}{_SELF_TAIL}",
       "user", "human", requires=("know", "find", "learn", "notice", "realiz", "realis", "suspect", "told"),
       anchored=True),
    # ---- role / identity hijack ---------------------------------------------------------------
    _p("role_hijack", ROLE_HIJACK,
       rf"{_B}you(?:{_S}are|['’]re){_F3}now{_S}(?:a|an|the|my){_E}"
       rf"|{_B}from{_S}now{_S}on{_F2}you(?:{_S}are|['’]re|{_S}will{_S}be){_S}(?:a|an|the|my){_E}"
       rf"|{_B}you{_S}will{_S}now{_S}(?:act|behave|respond|roleplay){_S}as{_E}"
       rf"|{_B}from{_S}now{_S}on{_F2}(?:you{_S}(?:will|shall|must|should|are{_S}to|['’]ll)(?:{_S}(?:now|always"
       rf"|only))?{_S})?(?:act|behave|respond|operate|function|roleplay|role{_SEP}play|pretend|answer){_S}(?:as|like)"
       rf"{_S}(?:a|an|the|my|if|though|(?-i:DAN)){_E}"
       rf"|{_B}you(?:{_S}are|['’]re)(?:{_S}now)?{_S}(?-i:DAN|STAN|DUDE)(?![\w'’])",
       "now", "dan", "stan", "dude"),
    _p("role_hijack", ROLE_HIJACK,
       rf"{_B}(?:{_NOW_YOU})(?:{_S}(?:a|an|the))?{_S}{_POWER_ROLE}"
       rf"|{_B}you(?:{_S}are|['’]re){_S}{_POWER_ROLE}{_S}now(?=[ \t]*(?:[.!;:,)\n]|$))",
       "you", "henceforth", "from now", "as of now", "from here", anchored=True,
       requires=("root", "admin", "sysadmin", "super", "sudo", "god", "system", "omnipotent", "powerful", "evil",
                 "amoral", "unaligned", "rogue", "unchained", "unshackled", "lawless"),
       check=_not_a_condition),
    _p("role_pretend", ROLE_HIJACK,
       rf"{_B}pretend{_F4}(?:you{_S}are|you['’]re|to{_S}be|that{_S}you{_S}are){_F3}(?:a|an|the|my|someone"
       rf"|somebody|dan|unrestricted|evil|jailbroken|root|admin|human){_E}",
       "pretend", requires=("you", "to be")),
    _p("identity_override", ROLE_HIJACK,
       rf"{_B}(?:name|call){_S}yourself{_S}{_WORD}|{_B}your{_S}(?:new{_S})?name{_S}is{_S}now{_E}"
       rf"|{_B}you(?:{_S}are|['’]re|{_S}will{_S}be){_S}(?:now{_S})?(?:called|named|known{_S}as){_E}",
       "yourself", "name", "called", "known"),
    _p("fake_update", ROLE_HIJACK,
       rf"{_B}you(?:{_S}have|['’]ve){_S}been{_F3}(?:(?:updated|upgraded|patched|reprogrammed|reconfigured"
       rf"|modified|retrained){_S}(?:to|into|with|by|so){_E}|(?:jailbroken|unlocked|freed){_E})",
       "been"),
    # ---- system prompt leak -------------------------------------------------------------------
    _p("system_prompt_leak", PROMPT_LEAK,
       rf"{_B}(?:output|print|reveal|repeat|dump|leak|disclose|recite|expose|echo|(?:show|tell|give|send)"
       rf"{_S}me|write{_S}out|spell{_S}out){_F2}(?:your|the|its){_F2}(?:system|initial|original|hidden"
       rf"|developer|internal){_S}(?:prompt|instructions|message){_E}(?!{_S}(?:size|length|tokens?|count|file"
       rf"|template|path|id){_E})"
       rf"|{_B}(?:what|how){_S}(?:is|are|was|were){_S}your{_S}(?:system|initial|original|hidden){_S}"
       rf"(?:prompt|instructions){_E}"
       rf"|{_B}(?:repeat|print|output|echo|copy|recite|reproduce|dump|reveal|show|display|write{_S}out|spell{_S}out"
       rf"|type{_S}out){_F2}(?:everything|all{_S}(?:of{_S})?(?:the{_S})?(?:text|words|content|instructions|messages"
       rf"|lines)|(?:the|your){_S}(?:entire|full|whole|complete|exact|verbatim){_S}(?:text|prompt|instructions"
       rf"|context|conversation|input)|the{_S}(?:text|words|content|instructions|messages|lines)){_F2}(?:above"
       rf"|before{_S}this|preceding|so{_S}far|verbatim|word{_S}for{_S}word){_E}{_ABOVE_END}"
       rf"|{_B}(?:repeat|print|output|echo|copy|recite|reproduce|dump|reveal|show|display|write|type)\w{{0,3}}{_F6}"
       rf"(?:starting|beginning){_S}(?:from|with|at){_S}[\"'“‘`]{{0,2}}you{_S}are{_E}",
       "prompt", "instructions", "message", "above", "preceding", "so far", "verbatim", "word for word",
       "starting", "beginning"),
)
