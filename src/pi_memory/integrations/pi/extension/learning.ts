/**
 * pi-memory learning hooks (the Python side is pi_memory.learning; index.ts calls registerLearning once).
 *
 *   - counts the tool calls of each run and tells the bridge before the run's after_run (review trigger),
 *   - asks for a flush before a compaction (fire-and-forget: the session file keeps every message, so the
 *     flush never delays the compaction) and at shutdown (awaited, at most flushCompactTimeoutMs),
 *   - registers /memory-consolidate [target] [--dry-run], the code behind `pi-memory consolidate`.
 *
 * Handlers registered here run before index.ts's own for the same event (registerLearning is called first),
 * so the shutdown flush happens before the bridge is asked to exit. Agent-event handlers never await.
 */

type BridgeLike = { alive: boolean; request(method: string, params?: object, timeoutMs?: number): Promise<any> };

const DEFAULT_FLUSH_TIMEOUT_MS = 60_000;
const CONSOLIDATE_TIMEOUT_MS = 180_000;

function sessionFileOf(ctx: any): string | undefined {
	try {
		return ctx?.sessionManager?.getSessionFile?.();
	} catch {
		return undefined;
	}
}

function toolCallsIn(messages: any[]): number {
	let count = 0;
	for (const m of messages ?? []) {
		if (m?.role !== "assistant" || !Array.isArray(m.content)) continue;
		for (const block of m.content) if (block?.type === "toolCall") count++;
	}
	return count;
}

export function registerLearning(pi: any, bridge: BridgeLike): void {
	let flushTimeoutMs = DEFAULT_FLUSH_TIMEOUT_MS;

	pi.on("session_start", () => {
		if (!bridge.alive) return;
		bridge
			.request("learning_status")
			.then((s) => {
				if (typeof s?.flushCompactTimeoutMs === "number" && s.flushCompactTimeoutMs > 0) flushTimeoutMs = s.flushCompactTimeoutMs;
			})
			.catch(() => {});
	});

	pi.on("agent_end", (event: any) => {
		if (!bridge.alive) return;
		const count = toolCallsIn(Array.isArray(event?.messages) ? event.messages : []);
		if (count > 0) bridge.request("tool_calls", { count }).catch(() => {});
	});

	pi.on("session_before_compact", (_event: any, ctx: any) => {
		if (!bridge.alive) return;
		bridge.request("flush", { reason: "compaction", sessionFile: sessionFileOf(ctx) }).catch(() => {});
	});

	pi.on("session_shutdown", async (_event: any, ctx: any) => {
		if (!bridge.alive) return;
		const wait = flushTimeoutMs / 1000;
		const flush = bridge
			.request("flush", { reason: "shutdown", sessionFile: sessionFileOf(ctx), wait }, flushTimeoutMs + 2_000)
			.catch(() => {});
		let timer: ReturnType<typeof setTimeout> | undefined;
		const limit = new Promise<void>((resolve) => {
			timer = setTimeout(resolve, flushTimeoutMs + 2_000);
		});
		await Promise.race([flush, limit]);
		clearTimeout(timer); // a pending timer would keep pi alive after shutdown
	});

	pi.registerCommand("memory-consolidate", {
		description: "Consolidate a memory store now: merge related entries, drop superseded ones (memory, user, project, failure)",
		handler: async (args: string, ctx: any) => {
			const words = String(args ?? "").trim().split(/\s+/).filter(Boolean);
			const dryRun = words.includes("--dry-run");
			const target = words.find((w) => !w.startsWith("--")) ?? "memory";
			let text: string;
			let ok = false;
			try {
				const reply = await bridge.request("consolidate", { target, dryRun }, CONSOLIDATE_TIMEOUT_MS);
				text = String(reply?.text ?? "");
				ok = reply?.ok === true;
			} catch (err) {
				text = `pi-memory: ${err instanceof Error ? err.message : String(err)}`;
			}
			if (ctx?.hasUI) ctx.ui.notify(text, ok ? "info" : "error");
			else process.stdout.write(`${text}\n`);
		},
	});
}
