/**
 * What the extension reads from pi's session and events: its own `custom` entries on the current branch
 * (the frozen snapshot, the recall marker), the plain text of a run's messages, and the turn's time.
 * Pure functions over plain objects (no pi imports), so they behave the same on pi 0.73 and 1.x.
 */

export const SNAPSHOT_ENTRY = "pi-memory-snapshot";
/** Custom entry marking that semantic recall ran in this session (recallFrequency: "session"). */
export const RECALL_ENTRY = "pi-memory-recall";

/**
 * Latest snapshot entry for `sessionId` on the given branch (a list of session entries).
 * A compaction after the latest snapshot means its refresh was never persisted (pi can compact
 * after the extension has shut down), so that snapshot is stale and undefined is returned.
 */
export function findSnapshot(branch: any[], sessionId: string): string | undefined {
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
export function findRecallMarker(branch: any[], sessionId: string | undefined): string | undefined {
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i];
		if (entry?.type === "custom" && entry.customType === RECALL_ENTRY && entry.data?.sessionId === sessionId) {
			return typeof entry.data.marker === "string" ? entry.data.marker : undefined;
		}
	}
	return undefined;
}

/** Plain text of the messages of one role (text blocks only: no thinking, images or tool calls). */
export function textOf(messages: any[], role: string): string {
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
export function localIso(d: Date): string {
	const pad = (n: number, w = 2) => String(Math.trunc(Math.abs(n))).padStart(w, "0");
	const off = -d.getTimezoneOffset();
	return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:` +
		`${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}${off >= 0 ? "+" : "-"}${pad(off / 60)}:${pad(off % 60)}`;
}

/** A message or event timestamp (epoch milliseconds, or an ISO string) as a Date; undefined when it is none. */
function dateOf(value: unknown): Date | undefined {
	if (typeof value !== "number" && typeof value !== "string") return undefined;
	if (typeof value === "string" && !value.trim()) return undefined;
	const d = new Date(value);
	return Number.isFinite(d.getTime()) && d.getTime() > 0 ? d : undefined;
}

/**
 * The time of the turn an event belongs to, as `localIso`: the event's own `timestamp`, else the message
 * that started the run (a custom message carries one; at agent_end, the run's first user message), else now.
 * pi 1.x's user-prompt `before_agent_start` carries no time, so a typed prompt's turn is "now" (the moment it
 * is answered). This is recall's `as_of` (nothing dated after it comes back) and capture's observation time.
 */
export function turnTime(event: any, now: Date = new Date()): string {
	const first = Array.isArray(event?.messages) ? event.messages.find((m: any) => m?.role === "user") : undefined;
	const d = dateOf(event?.timestamp) ?? dateOf(event?.message?.timestamp) ?? dateOf(first?.timestamp);
	return localIso(d ?? now);
}
