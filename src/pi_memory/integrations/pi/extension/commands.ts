/**
 * pi-memory's slash commands. Every command asks the Python bridge (`command {name, args, data}`), which runs
 * the same library code as the command's CLI twin and answers with text for a person
 * (src/pi_memory/integrations/pi/commands.py). This file only shows that text:
 *   - short text: one notification;
 *   - long text in the TUI: a pager (↑/↓ a line, space/b a page, g/G the ends, q or Esc closes; pi keeps
 *     PgUp/PgDn for its own scrolling);
 *   - long text without the TUI (RPC mode): one page per notification, `--page N` for the next one;
 *   - print mode (`pi -p "/memory status"`, pi 1.x): the whole text, printed (pi shows it on standard error).
 * Only Node built-ins; no pi imports, so it loads the same on pi 0.73 and 1.x.
 */

type Call = (method: string, params?: object, timeoutMs?: number) => Promise<any>;
type Offline = () => string | undefined;

const PAGE_LINES = 30;
const LONG_MS = 10 * 60_000; // indexing every transcript can take minutes
const RECALL_MS = 60_000; // a preview with --prompt may load the embedder

const COMMANDS: Array<{ name: string; id: string; description: string; timeoutMs?: number }> = [
	{ name: "memory", id: "memory", description: "Memory blocks and store usage (`/memory status`: files and health; `/memory limit KEY CHARS`: a block's limit)" },
	{ name: "memory-insights", id: "insights", description: "Everything stored: entries, blocks, pins, counts, recalls" },
	{ name: "memory-pin", id: "pin", description: "Standing instructions: /memory-pin TEXT | list | remove N [N ...] | clear" },
	{ name: "memory-preview-context", id: "preview", description: "What the next prompt gets from pi-memory, part by part", timeoutMs: RECALL_MS },
	{ name: "memory-interview", id: "interview", description: "A few questions that pre-fill your profile (USER.md)" },
	{ name: "memory-switch-project", id: "projects", description: "Project memory stores and their entry counts" },
	{ name: "memory-index-sessions", id: "index_sessions", description: "Index every pi / Claude Code / Codex session for search", timeoutMs: LONG_MS },
	{ name: "memory-sync-markdown", id: "sync_markdown", description: "Mirror the Markdown memory files into the search index" },
	{ name: "mem0", id: "mem0", description: "Semantic memory: status | search Q | profile | add TEXT | update ID TEXT | delete ID | dedup [--apply]", timeoutMs: RECALL_MS },
];

/** Argument completions pi offers after `/name ` (the verbs of each command family). */
const VERBS: Record<string, string[]> = {
	memory: ["status", "limit "],
	"memory-pin": ["list", "add ", "remove ", "clear"],
	mem0: ["status", "search ", "profile", "add ", "update ", "delete ", "dedup", "dedup --apply"],
};

function completions(name: string): ((prefix: string) => any[] | null) | undefined {
	const verbs = VERBS[name];
	if (!verbs) return undefined;
	return (prefix: string) => {
		const items = verbs.filter((v) => v.startsWith(prefix ?? "")).map((v) => ({ value: v, label: v.trim() }));
		return items.length > 0 ? items : null;
	};
}

function levelOf(reply: any): "info" | "warning" | "error" {
	return reply?.level === "warning" || reply?.level === "error" ? reply.level : "info";
}

/** `--page N` taken out of the arguments (1 when absent). */
function takePage(args: string): { args: string; page: number } {
	const match = /(?:^|\s)--page\s+(\d+)\s*$/.exec(args);
	if (!match) return { args: args.trim(), page: 1 };
	return { args: args.slice(0, match.index).trim(), page: Math.max(1, Number(match[1])) };
}

function clip(line: string, width: number): string {
	const chars = Array.from(line);
	return chars.length <= width ? line : `${chars.slice(0, Math.max(1, width - 1)).join("")}…`;
}

/** `lines` wrapped at word boundaries to `width` columns (long words are cut), so nothing is hidden. */
function wrap(lines: string[], width: number): string[] {
	const out: string[] = [];
	for (const line of lines) {
		let rest = Array.from(line);
		const indent = Array.from(/^\s*/.exec(line)?.[0] ?? "").slice(0, Math.floor(width / 2));
		if (rest.length <= width) {
			out.push(line);
			continue;
		}
		let first = true;
		while (rest.length > 0) {
			const room = first ? width : width - indent.length;
			if (rest.length <= room) {
				out.push((first ? "" : indent.join("")) + rest.join(""));
				break;
			}
			let cut = rest.lastIndexOf(" ", room);
			if (cut <= 0) cut = room;
			out.push((first ? "" : indent.join("")) + rest.slice(0, cut).join("").trimEnd());
			rest = rest.slice(cut);
			while (rest[0] === " ") rest = rest.slice(1);
			first = false;
		}
	}
	return out;
}

/** A scrolling view of `lines`; resolves when the user closes it (true), or false where there is no TUI. */
async function pager(ctx: any, title: string, lines: string[]): Promise<boolean> {
	if (typeof ctx?.ui?.custom !== "function" || (ctx.mode !== undefined && ctx.mode !== "tui")) return false;
	const shown = await ctx.ui.custom((tui: any, _theme: any, keybindings: any, done: (v: boolean) => void) => {
		let top = 0;
		let width = 80;
		const key = (data: string, id: string) => {
			try {
				return keybindings?.matches?.(data, id) === true;
			} catch {
				return false;
			}
		};
		const height = () => Math.max(5, Number(tui?.terminal?.rows ?? process.stdout.rows ?? 24) - 6);
		const move = (delta: number) => {
			const total = wrap(lines, width).length;
			top = Math.min(Math.max(0, top + delta), Math.max(0, total - height()));
			tui?.requestRender?.();
		};
		return {
			render(w: number): string[] {
				width = Math.max(20, w);
				const all = wrap(lines, width);
				const h = height();
				top = Math.min(top, Math.max(0, all.length - h));
				const end = Math.min(all.length, top + h);
				const foot = `${title} · lines ${top + 1}-${end} of ${all.length} · ↑↓ line · space/b page · g/G ends · q/Esc close`;
				return [...all.slice(top, end), "", clip(foot, width)];
			},
			handleInput(data: string): void {
				const h = height();
				if (data === "q" || key(data, "tui.select.cancel") || key(data, "tui.select.confirm")) done(true);
				else if (data === "k" || key(data, "tui.select.up")) move(-1);
				else if (data === "j" || key(data, "tui.select.down")) move(1);
				else if (data === "b" || key(data, "tui.select.pageUp")) move(-h);
				else if (data === " " || key(data, "tui.select.pageDown")) move(h);
				else if (data === "g") move(-Number.MAX_SAFE_INTEGER);
				else if (data === "G") move(Number.MAX_SAFE_INTEGER);
			},
			invalidate(): void {},
		};
	});
	return shown === true;
}

/** Show a command's text: a notification, a pager, or one page of it. */
async function show(ctx: any, command: string, text: string, level: "info" | "warning" | "error", page: number): Promise<void> {
	if (!ctx?.hasUI) {
		// `pi -p "/memory status"` (1.x reports the mode): print the whole text (pi routes it to standard error,
		// its standard output carries the answer); json and rpc streams stay clean. 0.73 has no ctx.mode.
		if (ctx?.mode === "print") process.stdout.write(`${text}\n`);
		return;
	}
	const lines = text.split("\n");
	if (lines.length <= PAGE_LINES) {
		ctx.ui.notify(text, level);
		return;
	}
	if (page === 1 && (await pager(ctx, `/${command}`, lines))) return;
	const pages = Math.ceil(lines.length / PAGE_LINES);
	const p = Math.min(page, pages);
	const chunk = lines.slice((p - 1) * PAGE_LINES, p * PAGE_LINES);
	const more = p < pages ? ` · next: /${command} --page ${p + 1}` : "";
	ctx.ui.notify(`${chunk.join("\n")}\n(page ${p} of ${pages}, lines ${(p - 1) * PAGE_LINES + 1}-${(p - 1) * PAGE_LINES + chunk.length} of ${lines.length}${more})`, level);
}

async function interview(ctx: any, call: Call, first: any): Promise<any> {
	const questions: Array<{ key: string; question: string }> = Array.isArray(first?.questions) ? first.questions : [];
	if (!ctx?.hasUI || typeof ctx.ui.input !== "function") return { text: "/memory-interview needs pi's interactive UI; use `pi-memory interview` in a terminal.", level: "warning" };
	if (first?.text) ctx.ui.notify(String(first.text), "info");
	const answers: Record<string, string> = {};
	for (const q of questions) {
		const answer = await ctx.ui.input(q.question, "");
		if (answer === undefined) break; // Esc: stop asking, keep what was answered
		answers[q.key] = String(answer);
	}
	return call("command", { name: "interview_save", args: "", data: { answers } });
}

export function registerCommands(pi: any, call: Call, offline: Offline): void {
	for (const spec of COMMANDS) {
		pi.registerCommand(spec.name, {
			description: spec.description,
			getArgumentCompletions: completions(spec.name),
			handler: async (rawArgs: string, ctx: any) => {
				const down = offline();
				if (down) {
					if (ctx?.hasUI) ctx.ui.notify(`pi-memory is offline: ${down}. Run \`pi-memory status\` in a terminal.`, "error");
					return;
				}
				const { args, page } = takePage(String(rawArgs ?? ""));
				try {
					if (spec.id === "mem0" && /^dedup\s+--apply\b/.test(args) && ctx?.hasUI && typeof ctx.ui.confirm === "function") {
						const ok = await ctx.ui.confirm("Remove exact duplicates?", "The newest copy of each is kept; the others are deleted (history kept).");
						if (!ok) {
							ctx.ui.notify("Nothing was removed.", "info");
							return;
						}
					}
					let reply = await call("command", { name: spec.id, args }, spec.timeoutMs);
					if (spec.id === "interview") reply = await interview(ctx, call, reply);
					await show(ctx, spec.name, String(reply?.text ?? ""), levelOf(reply), page);
				} catch (err) {
					if (ctx?.hasUI) ctx.ui.notify(`/${spec.name} failed: ${err instanceof Error ? err.message : String(err)}`, "error");
				}
			},
		});
	}
}
