/**
 * Test-only pi extension: slash commands that let a `pi -p` run trigger session operations
 * that otherwise need the TUI. Loaded next to the pi-memory extension with a second `-e`.
 *
 *   /e2e-compact      compact now and wait until it is done
 *   /e2e-tree-first   navigate the session tree to the first user message of the branch
 *                     (the leaf moves to that message's parent), without a summary
 */
export default function (pi: any) {
	pi.registerCommand("e2e-compact", {
		description: "e2e: compact the session now",
		handler: async (_args: string, ctx: any) => {
			await new Promise<void>((resolve, reject) => {
				ctx.compact({ onComplete: () => resolve(), onError: (err: any) => reject(err) });
			});
		},
	});
	pi.registerCommand("e2e-tree-first", {
		description: "e2e: navigate to the first user message",
		handler: async (_args: string, ctx: any) => {
			const branch = ctx.sessionManager.getBranch();
			const first = branch.find((e: any) => e.type === "message" && e.message?.role === "user");
			if (!first) throw new Error("no user message on the branch");
			await ctx.navigateTree(first.id, { summarize: false });
		},
	});
}
