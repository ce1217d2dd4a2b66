/**
 * pi-memory skills in pi: discovery, the complex-run question, and the /memory-skills manager.
 *
 *   - resources_discover: hands pi the folders of our skills (global and the current project's), so pi lists
 *     them with its own skills. The bridge leaves out hostile or already-visible ones.
 *   - After an agent run with 8+ tool calls of 2+ different tools, the agent is asked once per session
 *     (a hidden message: a follow-up turn in the TUI, attached to the next prompt in print / RPC mode)
 *     whether the procedure is worth saving with skill_manage. Python owns the rule and the wording
 *     (pi_memory/skills/nudge.py, fetched once at session start); this file counts the calls.
 *   - /memory-skills [query]: search, select (several at once), move between global and project, delete,
 *     with pi's dialogs (ctx.ui.select / input / confirm / notify), so it works in the TUI and in RPC mode.
 *
 * Agent-event handlers never await the bridge (pi-agent.md §2.6); resources_discover and commands may.
 */

export interface SkillsBridge {
	readonly alive: boolean;
	request(method: string, params?: object, timeoutMs?: number): Promise<any>;
}

const NUDGE_TYPE = "pi-memory-skill-nudge";

type Summary = { id: string; scope: string; slug: string; name?: string; description?: string; error?: string };

function matches(skill: Summary, query: string): boolean {
	const hay = `${skill.id} ${skill.name ?? ""} ${skill.description ?? ""}`.toLowerCase();
	return query
		.toLowerCase()
		.split(/\s+/)
		.filter(Boolean)
		.every((word) => hay.includes(word));
}

function label(skill: Summary, selected: boolean): string {
	const badge = skill.scope === "global" ? "[G]" : "[P]";
	const about = skill.error ? `unreadable: ${skill.error}` : (skill.description ?? "");
	const short = about.length > 70 ? `${about.slice(0, 69)}…` : about;
	return `${selected ? "[x]" : "[ ]"} ${badge} ${skill.slug} — ${short}`;
}

function summaryText(verb: string, results: any[]): { text: string; ok: boolean } {
	const done = results.filter((r) => r?.success);
	const failed = results.filter((r) => !r?.success);
	const lines = [`${verb} ${done.length} skill(s).`];
	for (const r of failed) lines.push(`Not ${verb.toLowerCase()}: ${r.id} — ${r.error}`);
	if (done.length) lines.push("Run /reload so pi sees the change.");
	return { text: lines.join("\n"), ok: failed.length === 0 };
}

async function manager(bridge: SkillsBridge, args: string, ctx: any): Promise<void> {
	const notify = (text: string, level = "info") => {
		try {
			ctx.ui.notify(text, level);
		} catch {}
	};
	if (!bridge.alive) return notify("pi-memory is offline; skills cannot be managed in this session.", "error");
	if (!ctx?.hasUI) return;
	let query = (args ?? "").trim();
	const selected = new Set<string>();
	for (;;) {
		let listing: any;
		try {
			listing = await bridge.request("skills", { action: "list" });
		} catch (err) {
			return notify(`Could not list skills: ${err instanceof Error ? err.message : String(err)}`, "error");
		}
		const all: Summary[] = Array.isArray(listing?.skills) ? listing.skills : [];
		if (!all.length) return notify("No saved skills yet. The agent saves a skill when a task taught it a procedure worth reusing, or when you ask it to save one.");
		for (const id of [...selected]) if (!all.some((s) => s.id === id)) selected.delete(id);
		const shown = all.filter((s) => matches(s, query));
		const search = `Search: ${query || "(showing all)"}`;
		const act = `Act on ${selected.size} selected…`;
		const selectAll = "Select all shown";
		const clear = "Clear selection";
		const close = "Close";
		const items = shown.map((s) => label(s, selected.has(s.id)));
		const options = [search, ...(selected.size ? [act, clear] : []), ...(shown.length ? [selectAll] : []), ...items, close];
		const title = `Skills: ${shown.length} of ${all.length}${query ? ` matching "${query}"` : ""} (pick one to select it)`;
		const choice = await ctx.ui.select(title, options);
		if (choice === undefined || choice === close) return;
		if (choice === search) {
			const typed = await ctx.ui.input("Search skills by name or description (empty: all)", query);
			if (typeof typed === "string") query = typed.trim();
			continue;
		}
		if (choice === selectAll) {
			for (const s of shown) selected.add(s.id);
			continue;
		}
		if (choice === clear) {
			selected.clear();
			continue;
		}
		const index = items.indexOf(choice);
		if (index >= 0) {
			const id = shown[index].id;
			if (selected.has(id)) selected.delete(id);
			else selected.add(id);
			continue;
		}
		if (choice !== act) continue;
		const ids = [...selected];
		const toGlobal = "Move to global";
		const toProject = listing?.project ? `Move to project ${listing.project}` : undefined;
		const remove = "Delete";
		const back = "Back";
		const what = await ctx.ui.select(`${ids.length} selected skill(s)`, [toGlobal, ...(toProject ? [toProject] : []), remove, back]);
		if (what === undefined || what === back) continue;
		let reply: any;
		try {
			if (what === remove) {
				const sure = await ctx.ui.confirm(
					`Delete ${ids.length} skill(s)?`,
					`${ids.join(", ")}\nTheir folders move to the data folder's .trash/skills/.`,
				);
				if (!sure) continue;
				reply = await bridge.request("skills", { action: "delete", ids });
			} else {
				reply = await bridge.request("skills", { action: "move", ids, to: what === toGlobal ? "global" : "project" });
			}
		} catch (err) {
			notify(`pi-memory: ${err instanceof Error ? err.message : String(err)}`, "error");
			continue;
		}
		const results = Array.isArray(reply?.results) ? reply.results : [];
		const verb = what === remove ? "Deleted" : "Moved";
		const summary = summaryText(verb, results);
		notify(summary.text, summary.ok ? "info" : "warning");
		selected.clear();
	}
}

export function registerSkills(pi: any, bridge: SkillsBridge): void {
	let calls: string[] = [];
	let nudged = false;

	pi.on("resources_discover", async (event: any) => {
		if (!bridge.alive) return undefined;
		try {
			const reply = await bridge.request("skills", { action: "paths", cwd: event?.cwd });
			const paths = Array.isArray(reply?.paths) ? reply.paths.filter((p: any) => typeof p === "string") : [];
			return paths.length ? { skillPaths: paths } : undefined;
		} catch {
			return undefined;
		}
	});

	pi.on("agent_start", () => {
		calls = [];
	});
	pi.on("tool_execution_end", (event: any) => {
		if (typeof event?.toolName === "string") calls.push(event.toolName);
	});
	// The rule and the wording come from Python (skills/nudge.py) once, at session start (awaiting is safe
	// there), so agent_end can decide and queue the question synchronously, before pi sends a next prompt.
	let rule: { minToolCalls: number; minDistinctTools: number; template: string } | undefined;
	pi.on("session_start", async () => {
		if (rule || !bridge.alive) return;
		try {
			const reply = await bridge.request("skills", { action: "nudge_rule" });
			if (typeof reply?.template === "string" && Number.isFinite(reply?.minToolCalls)) rule = reply;
		} catch {}
	});
	pi.on("agent_end", (_event: any, ctx: any) => {
		const names = calls;
		calls = [];
		if (nudged || !rule || !bridge.alive) return;
		const distinct = new Set(names).size;
		if (names.length < rule.minToolCalls || distinct < rule.minDistinctTools) return;
		nudged = true;
		const text = rule.template.replace("{calls}", String(names.length)).replace("{tools}", String(distinct));
		// In the TUI the question starts a turn of its own (pi queues what the user types meanwhile). In print
		// and RPC mode the client sends its next prompt as soon as the run ends, and pi refuses a prompt while
		// a turn runs, so there the question rides along with the next prompt instead.
		const tui = ctx?.mode === "tui" || (ctx?.mode === undefined && ctx?.hasUI === true);
		const send = () => {
			try {
				pi.sendMessage(
					{ customType: NUDGE_TYPE, content: text, display: false },
					tui ? { deliverAs: "followUp", triggerTurn: true } : { deliverAs: "nextTurn" },
				);
				if (ctx?.hasUI) ctx.ui.notify("pi-memory asked the agent whether this procedure is worth saving as a skill.", "info");
			} catch {
				// the session ended meanwhile: nothing to ask
			}
		};
		// nextTurn is queued at once (before pi sends the next prompt). A turn of its own waits until this run
		// has wound down: pi 0.73 drops a follow-up queued from inside agent_end.
		if (tui) setTimeout(send, 0);
		else send();
	});

	pi.registerCommand("memory-skills", {
		description: "Manage saved skills: search, select, move between global and project, delete",
		handler: async (args: string, ctx: any) => manager(bridge, args, ctx),
	});
}
