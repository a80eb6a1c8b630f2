/** Types of scripts/build.cjs, for the TypeScript callers (tests). */
export declare const ROOT: string;
export declare const BUILD_DIR: string;
/** The bundles by name (build/<name>.js) and their entry points. */
export declare const BUNDLES: Readonly<Record<string, string>>;
/** The bundle that runs `command`: its own when it has one (e2e), otherwise `main`. */
export declare function bundleOf(command: string): string;
/** Build when an input changed since the last build; returns whether it built. */
export declare function ensureBuilt(options?: { force?: boolean }): boolean;
