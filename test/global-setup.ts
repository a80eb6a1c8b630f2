// Compile the CLIs once, so tests that run them as a person would (node build/...) see
// the current sources.
export default async function setup(): Promise<void> {
  // @ts-expect-error: a plain ES module without type declarations
  const { ensureBuilt } = (await import('../scripts/build.mjs')) as { ensureBuilt: () => Promise<boolean> };
  await ensureBuilt();
}
