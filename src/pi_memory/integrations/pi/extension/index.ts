/**
 * pi-memory extension for the pi coding agent.
 *
 * All memory logic lives in Python. This file only:
 *   - runs ONE long-lived bridge process per pi session
 *     (`<python> -m pi_memory.integrations.pi.bridge`, newline-delimited JSON-RPC on stdio),
 *   - registers the memory tools the bridge describes and forwards their calls,
 *   - appends a frozen memory snapshot to the system prompt, persisted per session as a
 *     `custom` entry ("pi-memory-snapshot") so a resumed session gets a byte-identical prompt.
 *
 * It must never hang or break pi: every request has a timeout, a dead bridge turns into clear
 * tool errors plus an "offline" status, and agent-event handlers never await the bridge.
 * Only Node built-ins are used; no build step (pi loads this file with jiti).
 * See docs/pi-extension.md for the protocol and the snapshot rules.
 */
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { registerLearning } from "./learning.ts";
import { registerCommands } from "./commands.ts";
import { registerSkills } from "./skills";

const SNAPSHOT_ENTRY = "pi-memory-snapshot";
/** Custom entry marking that semantic recall ran in this session (recallFrequency: "session"). */
const RECALL_ENTRY = "pi-memory-recall";
const RECALL_MARKER_KEY = "pi-memory.semantic.recalled";
const STATUS_KEY = "pi-memory";

function envMs(name: string, fallback: number): number {
	const value = Number(process.env[name]);
	return Number.isFinite(value) && value > 0 ? value : fallback;
}
const RPC_TIMEOUT_MS = envMs("PI_MEMORY_RPC_TIMEOUT_MS", 10_000);
const HELLO_TIMEOUT_MS = envMs("PI_MEMORY_HELLO_TIMEOUT_MS", 20_000);
// At shutdown the bridge finishes queued work (indexing, semantic capture) for at most this long.
const SHUTDOWN_WAIT_MS = envMs("PI_MEMORY_SHUTDOWN_WAIT_MS", 5_000);

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

function errorText(err: unknown): string {
	return err instanceof Error ? err.message : String(err);
}

type Pending = { resolve: (v: any) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> };

/** One Python bridge process and its JSON-RPC stream. */
class Bridge {
	private child: any;
	private pending = new Map<number, Pending>();
	private nextId = 1;
	private buffer = "";
	private stderrTail = "";
	private exited: Promise<void>;
	private closing = false;
	deadReason: string | undefined;
	/** Called once when the bridge dies unexpectedly (not on a requested shutdown). */
	onDead: ((reason: string) => void) | undefined;

	constructor(python: string, cwd: string) {
		const logFile = process.env.PI_MEMORY_BRIDGE_LOG;
		let markExited = () => {};
		this.exited = new Promise<void>((resolve) => (markExited = resolve));
		try {
			this.child = spawn(python, ["-m", "pi_memory.integrations.pi.bridge"], {
				cwd,
				env: process.env,
				stdio: ["pipe", "pipe", "pipe"],
				windowsHide: true,
			});
		} catch (err) {
			this.deadReason = `could not start ${python}: ${errorText(err)}`;
			markExited();
			return;
		}
		const child = this.child;
		// The bridge must never keep pi alive on its own; pending requests hold ref'd timers.
		child.unref();
		for (const stream of [child.stdin, child.stdout, child.stderr]) {
			stream?.on("error", () => {}); // EPIPE etc. surface through 'exit'/'close' instead
			(stream as any)?.unref?.();
		}
		child.stdout.setEncoding("utf8");
		child.stdout.on("data", (chunk: string) => this.onData(chunk));
		child.stderr.setEncoding("utf8");
		child.stderr.on("data", (chunk: string) => {
			this.stderrTail = (this.stderrTail + chunk).slice(-2000);
			if (logFile) {
				try {
					appendFileSync(logFile, chunk);
				} catch {}
			}
		});
		child.on("error", (err: Error) => this.fail(`could not start ${python}: ${err.message}`));
		child.on("exit", (code: number | null, signal: string | null) => {
			const how = signal ? `signal ${signal}` : `code ${code}`;
			const tail = this.stderrTail.trim().split("\n").slice(-3).join(" | ");
			this.fail(`bridge process (${python}) exited with ${how}${tail ? `: ${tail}` : ""}`);
		});
		child.on("close", () => markExited());
	}

	get alive(): boolean {
		return this.deadReason === undefined;
	}

	private onData(chunk: string): void {
		this.buffer += chunk;
		let nl: number;
		while ((nl = this.buffer.indexOf("\n")) >= 0) {
			const line = this.buffer.slice(0, nl).trim();
			this.buffer = this.buffer.slice(nl + 1);
			if (!line) continue;
			let msg: any;
			try {
				msg = JSON.parse(line);
			} catch {
				continue; // not ours; the Python side never writes anything but protocol lines
			}
			const waiter = typeof msg?.id === "number" ? this.pending.get(msg.id) : undefined;
			if (!waiter) continue;
			this.pending.delete(msg.id);
			clearTimeout(waiter.timer);
			if (msg.error) waiter.reject(new Error(String(msg.error.message ?? "bridge error")));
			else waiter.resolve(msg.result);
		}
	}

	/** Mark the bridge dead, fail every waiting request, and stop the process. */
	fail(reason: string): void {
		const first = this.deadReason === undefined;
		if (first) this.deadReason = reason;
		for (const [id, waiter] of this.pending) {
			this.pending.delete(id);
			clearTimeout(waiter.timer);
			waiter.reject(new Error(this.deadReason));
		}
		try {
			if (this.child && this.child.exitCode === null) this.child.kill("SIGKILL");
		} catch {}
		if (first && !this.closing) {
			try {
				this.onDead?.(reason);
			} catch {}
		}
	}

	request(method: string, params: object = {}, timeoutMs = RPC_TIMEOUT_MS): Promise<any> {
		if (!this.alive) return Promise.reject(new Error(this.deadReason));
		const id = this.nextId++;
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				this.pending.delete(id);
				// A bridge that does not answer in time is treated as dead: later calls fail fast.
				this.fail(`bridge did not answer '${method}' within ${timeoutMs} ms`);
				reject(new Error(`bridge did not answer '${method}' within ${timeoutMs} ms`));
			}, timeoutMs);
			this.pending.set(id, { resolve, reject, timer });
			try {
				this.child.stdin.write(`${JSON.stringify({ id, method, params })}\n`);
			} catch (err) {
				this.fail(`could not write to the bridge: ${errorText(err)}`);
			}
		});
	}

	/** Ask the bridge to exit; kill it if it has not gone after `waitMs`. Idempotent. */
	async shutdown(waitMs = SHUTDOWN_WAIT_MS): Promise<void> {
		if (!this.child) return;
		this.closing = true;
		if (this.alive) {
			// The bridge finishes queued background work (indexing, capture), for at most waitMs - 0.5 s.
			const bye = this.request("shutdown", { wait: Math.max(0, waitMs - 500) / 1000 }, waitMs).catch(() => {});
			try {
				this.child.stdin.end();
			} catch {}
			await bye;
		}
		const timer = new Promise<void>((resolve) => setTimeout(resolve, Math.min(waitMs, 1_000)));
		await Promise.race([this.exited, timer]);
		if (this.deadReason === undefined) this.deadReason = "pi-memory bridge was shut down";
		try {
			if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
		} catch {}
	}
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

/**
 * Latest snapshot entry for `sessionId` on the given branch (a list of session entries).
 * A compaction after the latest snapshot means its refresh was never persisted (pi can compact
 * after the extension has shut down), so that snapshot is stale and undefined is returned.
 */
function findSnapshot(branch: any[], sessionId: string): string | undefined {
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i];
		if (entry?.type === "compaction") return undefined;
		if (entry?.type !== "custom" || entry.customType !== SNAPSHOT_ENTRY) continue;
		const data = entry.data;
		if (data && data.sessionId === sessionId && typeof data.snapshot === "string") return data.snapshot;
	}
	return undefined;
}

/** The recall marker persisted on this branch for `sessionId`, if any. */
function findRecallMarker(branch: any[], sessionId: string | undefined): string | undefined {
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i];
		if (entry?.type === "custom" && entry.customType === RECALL_ENTRY && entry.data?.sessionId === sessionId) {
			return typeof entry.data.marker === "string" ? entry.data.marker : undefined;
		}
	}
	return undefined;
}

/** Plain text of the messages of one role (text blocks only: no thinking, images or tool calls). */
function textOf(messages: any[], role: string): string {
	const parts: string[] = [];
	for (const m of messages ?? []) {
		if (m?.role !== role) continue;
		if (typeof m.content === "string") parts.push(m.content);
		else if (Array.isArray(m.content)) {
			for (const block of m.content) if (block?.type === "text" && typeof block.text === "string") parts.push(block.text);
		}
	}
	return parts.join("\n\n");
}

/** `d` as ISO 8601 in the user's time zone with its offset (2026-03-14T23:30:00.000-08:00), so the turn's date
 * ("yesterday") is the user's day, not the UTC one. */
function localIso(d: Date): string {
	const pad = (n: number, w = 2) => String(Math.trunc(Math.abs(n))).padStart(w, "0");
	const off = -d.getTimezoneOffset();
	return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:` +
		`${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}${off >= 0 ? "+" : "-"}${pad(off / 60)}:${pad(off % 60)}`;
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
		const hello = await bridge.request("hello", { cwd: process.cwd() }, HELLO_TIMEOUT_MS);
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
			const reply = await bridge.request("recall", { prompt: event.prompt, state: { [RECALL_MARKER_KEY]: marker ?? null } });
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
				timestamp: localIso(new Date()),
			})
			.catch(() => {});
	});

	pi.on("session_shutdown", async () => {
		if (pendingSnapshot) {
			await Promise.race([pendingSnapshot, new Promise((r) => setTimeout(r, 1_500))]);
		}
		await bridge.shutdown();
	});
}
