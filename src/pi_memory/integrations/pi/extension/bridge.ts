/**
 * The pi-memory bridge process, seen from the extension: ONE long-lived Python process per pi session
 * (`<python> -m pi_memory.integrations.pi.bridge`, newline-delimited JSON-RPC on stdio).
 *
 * Every request has a timeout; a bridge that does not answer in time, exits or cannot be started is marked
 * dead (`deadReason`), every waiting request fails with that reason, and `onDead` is called once. The process
 * is unref'd so it never keeps pi alive. Only Node built-ins (pi loads this file with jiti, no build step).
 */
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

function envMs(name: string, fallback: number): number {
	const value = Number(process.env[name]);
	return Number.isFinite(value) && value > 0 ? value : fallback;
}
const RPC_TIMEOUT_MS = envMs("PI_MEMORY_RPC_TIMEOUT_MS", 10_000);
export const HELLO_TIMEOUT_MS = envMs("PI_MEMORY_HELLO_TIMEOUT_MS", 20_000);
// At shutdown the bridge finishes queued work (indexing, semantic capture) for at most this long.
const SHUTDOWN_WAIT_MS = envMs("PI_MEMORY_SHUTDOWN_WAIT_MS", 5_000);

/** PI_TIMING=1 (pi's switch) or PI_MEMORY_TIMING=1: lifecycle spans on stderr, the bridge's passed through. */
const TIMING = ["PI_TIMING", "PI_MEMORY_TIMING"].some((n) => !["", "0", "false", "no", "off"].includes(String(process.env[n] ?? "").trim().toLowerCase()));
const TIMING_PREFIX = "pi-memory timing ";
export async function span<T>(name: string, work: () => Promise<T>): Promise<T> {
	if (!TIMING) return work();
	const start = performance.now();
	try {
		return await work();
	} finally {
		process.stderr.write(`${TIMING_PREFIX}${name} ${(performance.now() - start).toFixed(1)}ms\n`);
	}
}

export function errorText(err: unknown): string {
	return err instanceof Error ? err.message : String(err);
}

type Pending = { resolve: (v: any) => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> };

/** One Python bridge process and its JSON-RPC stream. */
export class Bridge {
	private child: any;
	private pending = new Map<number, Pending>();
	private nextId = 1;
	private buffer = "";
	private stderrTail = "";
	private timingPart = "";
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
			if (TIMING) {
				const lines = (this.timingPart + chunk).split("\n");
				this.timingPart = lines.pop() ?? ""; // a span line split across chunks waits for its end
				for (const line of lines) if (line.startsWith(TIMING_PREFIX)) process.stderr.write(`${line}\n`);
			}
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
