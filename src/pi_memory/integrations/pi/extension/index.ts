/**
 * pi-memory extension for the pi coding agent.
 *
 * All memory logic lives in Python. The extension only:
 *   - runs ONE long-lived bridge process per pi session (`bridge.ts`),
 *   - registers the memory tools the bridge describes and forwards their calls,
 *   - appends a frozen memory snapshot to the system prompt, persisted per session as a
 *     `custom` entry ("pi-memory-snapshot", `entries.ts`) so a resumed session gets a byte-identical prompt,
 *   - passes each turn's time to recall (`as_of`) and to after_run.
 *
 * It must never hang or break pi: every request has a timeout, a dead bridge turns into clear
 * tool errors plus an "offline" status, and agent-event handlers never await the bridge.
 * Only Node built-ins are used; no build step (pi loads these files with jiti).
 * See docs/pi-extension.md for the protocol and the snapshot rules.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Bridge, errorText, HELLO_TIMEOUT_MS, span } from "./bridge.ts";
import { findRecallMarker, findSnapshot, RECALL_ENTRY, SNAPSHOT_ENTRY, textOf, turnTime } from "./entries.ts";
import { registerLearning } from "./learning.ts";
import { registerCommands } from "./commands.ts";
import { registerSkills } from "./skills.ts";

const RECALL_MARKER_KEY = "pi-memory.semantic.recalled";
const STATUS_KEY = "pi-memory";

function extensionDir(): string {
	if (typeof __dirname === "string") return __dirname;
	return dirname(fileURLToPath(import.meta.url));
}

function readJson(path: string): any {
	try {
		return existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : undefined;
	} catch {
		return undefined;
	}
}

/** Python to run: $PI_MEMORY_PYTHON, then pi-memory.json next to this file, then python3. */
function resolvePython(dir: string): string {
	const fromEnv = process.env.PI_MEMORY_PYTHON;
	if (fromEnv) return fromEnv;
	const config = readJson(join(dir, "pi-memory.json"));
	if (config && typeof config.python === "string" && config.python) return config.python;
	return "python3";
}

type ToolSpec = { name: string; label?: string; description: string; parameters: any };

function loadFallbackTools(dir: string): ToolSpec[] {
	const specs = readJson(join(dir, "fallback-tools.json"));
	return Array.isArray(specs) ? specs : [];
}

function offlineText(reason: string | undefined): string {
	return (
		`pi-memory backend is not running: ${reason ?? "unknown reason"}. ` +
		"Memory tools are unavailable in this session; restart pi or run `pi-memory status`."
	);
}

export default async function piMemory(pi: any): Promise<void> {
	const dir = extensionDir();
	const python = resolvePython(dir);
	const bridge = new Bridge(python, process.cwd());

	let statusText = "memory: starting";
	let sessionId: string | undefined;
	/** The frozen snapshot; undefined = not chosen yet (built at the next prompt). */
	let snapshot: string | undefined;
	/** A snapshot refresh in flight (compaction / tree navigation); awaited by the next prompt. */
	let pendingSnapshot: Promise<void> | undefined;
	/** The per-run parts (memory blocks, standing rules) of the last run; reused while the bridge is down. */
	let lastRun: string | undefined;
	let uiCtx: any;
	const erroredCalls = new Set<string>();

	const showStatus = (ctx: any = uiCtx) => {
		try {
			if (ctx?.hasUI) ctx.ui.setStatus(STATUS_KEY, statusText);
		} catch {}
	};
	const showOffline = () => {
		statusText = `memory: offline (${bridge.deadReason})`.slice(0, 160);
		showStatus();
	};
	const goOffline = (reason: string, ctx?: any) => {
		if (ctx) uiCtx = ctx;
		bridge.fail(reason);
		showOffline();
	};
	bridge.onDead = showOffline; // the bridge died on its own (crash, timeout)
	const takeStatus = (status: any) => {
		if (status && typeof status.text === "string") statusText = status.text;
	};
	const persist = (text: string, reason: string) => {
		try {
			pi.appendEntry(SNAPSHOT_ENTRY, { sessionId, snapshot: text, reason });
		} catch {
			// ctx went stale (session replaced); the next session builds its own snapshot
		}
	};

	let tools: ToolSpec[] = [];
	try {
		const hello = await span("extension.session-start", () => bridge.request("hello", { cwd: process.cwd() }, HELLO_TIMEOUT_MS));
		tools = Array.isArray(hello?.tools) ? hello.tools : [];
		takeStatus(hello?.status);
	} catch (err) {
		goOffline(errorText(err));
		tools = loadFallbackTools(dir); // keep the tools visible so the model gets a clear error
	}

	const toolNames = new Set(tools.map((t) => t.name));
	for (const spec of tools) {
		pi.registerTool({
			name: spec.name,
			label: spec.label ?? spec.name,
			description: spec.description,
			parameters: spec.parameters,
			async execute(toolCallId: string, params: any, _signal: any, _onUpdate: any, ctx: any) {
				if (!bridge.alive) throw new Error(offlineText(bridge.deadReason));
				let reply: any;
				try {
					reply = await bridge.request("call_tool", { name: spec.name, arguments: params ?? {} });
				} catch (err) {
					if (bridge.alive) throw new Error(`pi-memory: ${errorText(err)}`); // a request error, bridge fine
					goOffline(errorText(err), ctx);
					throw new Error(offlineText(bridge.deadReason));
				}
				takeStatus(reply?.status);
				showStatus(ctx);
				if (reply?.isError) erroredCalls.add(toolCallId);
				return {
					content: [{ type: "text", text: String(reply?.text ?? "") }],
					details: reply?.result ?? {},
					isError: reply?.isError === true,
				};
			},
		});
	}

	registerLearning(pi, bridge);
	registerCommands(pi, (method, params, timeoutMs) => bridge.request(method, params, timeoutMs), () => (bridge.alive ? undefined : bridge.deadReason));
	registerSkills(pi, bridge);

	// Refusals come back as normal results; flag them as errors (0.73 ignores `isError` on results).
	pi.on("tool_result", (event: any) => {
		if (!toolNames.has(event.toolName) || !erroredCalls.delete(event.toolCallId)) return;
		return { isError: true };
	});

	/** Pick the snapshot persisted on the current branch for this session, if the bridge still trusts it. */
	const selectFromBranch = (ctx: any): Promise<void> => {
		const branch = ctx.sessionManager.getBranch?.() ?? [];
		const saved = sessionId ? findSnapshot(branch, sessionId) : undefined;
		snapshot = undefined;
		if (saved === undefined || !bridge.alive) return Promise.resolve();
		return bridge
			.request("validate_snapshot", { text: saved })
			.then((reply) => {
				if (reply?.ok === true) snapshot = saved;
			})
			.catch((err) => {
				if (!bridge.alive) goOffline(errorText(err));
			});
	};

	/** Build a fresh snapshot from disk and persist it. */
	const rebuild = (reason: string): Promise<void> => {
		if (!bridge.alive) {
			snapshot = undefined;
			return Promise.resolve();
		}
		return bridge
			.request("snapshot")
			.then((reply) => {
				snapshot = String(reply?.text ?? "");
				takeStatus(reply?.status);
				persist(snapshot, reason);
			})
			.catch((err) => {
				snapshot = undefined;
				if (!bridge.alive) goOffline(errorText(err));
			});
	};

	const track = (task: Promise<void>) => {
		const run: Promise<void> = task.finally(() => {
			if (pendingSnapshot === run) pendingSnapshot = undefined;
		});
		pendingSnapshot = run;
	};

	pi.on("session_start", async (_event: any, ctx: any) => {
		uiCtx = ctx;
		sessionId = ctx.sessionManager.getSessionId?.();
		showStatus(ctx);
		// Session events are not part of the agent-event queue, so awaiting here is safe.
		await selectFromBranch(ctx);
	});

	pi.on("before_agent_start", async (event: any, ctx: any) => {
		uiCtx = ctx;
		if (!bridge.alive) {
			// No bridge: never wait. A snapshot already frozen (and validated) for this session stays,
			// so the prompt does not change mid-session; otherwise the run goes on without one.
			showStatus(ctx);
			const kept = [snapshot, lastRun].filter((t) => t).join("\n\n"); // the last run's blocks and rules stay too
			return kept ? { systemPrompt: `${event.systemPrompt}\n\n${kept}` } : undefined;
		}
		// Requests are handled in order, so begin_turn lands before this run's tool calls.
		bridge.request("begin_turn").catch((err) => {
			if (!bridge.alive) goOffline(errorText(err), ctx);
		});
		if (pendingSnapshot) await pendingSnapshot;
		if (snapshot === undefined) await rebuild(sessionId ? "session" : "ephemeral");
		const perRun = await runContext(ctx);
		const recalled = await recall(event, ctx);
		showStatus(ctx);
		const result: any = {};
		// The frozen part (snapshot / policy) first, then the parts rebuilt for this run (blocks, standing rules).
		const added = [snapshot, perRun].filter((t) => t).join("\n\n");
		if (added) result.systemPrompt = `${event.systemPrompt}\n\n${added}`;
		// Recalled memories go on the user channel as untrusted data, never into the system prompt.
		if (recalled) result.message = { customType: "pi-memory-recall", content: recalled, display: false };
		return result.systemPrompt || result.message ? result : undefined;
	});

	/** Memory blocks and standing instructions, read at the start of every run (never inside one). */
	const runContext = async (ctx: any): Promise<string | undefined> => {
		if (!bridge.alive) return lastRun;
		try {
			const reply = await bridge.request("run_context");
			lastRun = typeof reply?.text === "string" && reply.text ? reply.text : undefined;
		} catch (err) {
			if (!bridge.alive) goOffline(errorText(err), ctx); // keep the last run's parts: the prompt stays as it was
		}
		return lastRun;
	};

	/** Semantic recall for this prompt (awaited: before_agent_start is not in the agent-event queue). */
	const recall = async (event: any, ctx: any): Promise<string | undefined> => {
		if (!bridge.alive || typeof event?.prompt !== "string") return undefined;
		let marker: string | undefined;
		try {
			marker = findRecallMarker(ctx.sessionManager.getBranch?.() ?? [], sessionId);
		} catch {}
		try {
			const reply = await bridge.request("recall", {
				prompt: event.prompt,
				state: { [RECALL_MARKER_KEY]: marker ?? null },
				timestamp: turnTime(event),
			});
			takeStatus(reply?.status); // shows a capture failure of the previous turn (any process)
			if (typeof reply?.marker === "string" && sessionId) {
				try {
					pi.appendEntry(RECALL_ENTRY, { sessionId, marker: reply.marker });
				} catch {}
			}
			return typeof reply?.text === "string" && reply.text ? reply.text : undefined;
		} catch (err) {
			if (!bridge.alive) goOffline(errorText(err), ctx);
			return undefined;
		}
	};

	// Compaction may run inside pi's agent-event queue (auto-compaction after agent_end), so the
	// refresh is started here but only awaited by the next before_agent_start / session_shutdown.
	pi.on("session_compact", () => {
		track(rebuild("compaction"));
	});

	pi.on("session_tree", (_event: any, ctx: any) => {
		// Read the new branch now (synchronously), validate in the background.
		track(selectFromBranch(ctx));
	});

	// An agent run ended: let Python index the session file as it grew. Fire-and-forget: this handler runs
	// in pi's agent-event queue, where awaiting I/O reorders the session file (pi-agent.md §2.6).
	pi.on("agent_end", (event: any, ctx: any) => {
		if (!bridge.alive) return;
		let sessionFile: string | undefined;
		try {
			sessionFile = ctx?.sessionManager?.getSessionFile?.();
		} catch {}
		const messages = Array.isArray(event?.messages) ? event.messages : [];
		bridge
			.request("after_run", {
				sessionFile,
				userText: textOf(messages, "user"),
				assistantText: textOf(messages, "assistant"),
				timestamp: turnTime(event),
			})
			.catch(() => {});
	});

	pi.on("session_shutdown", async () => {
		if (pendingSnapshot) {
			await Promise.race([pendingSnapshot, new Promise((r) => setTimeout(r, 1_500))]);
		}
		await span("extension.shutdown", () => bridge.shutdown());
	});
}
