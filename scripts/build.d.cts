/** Types of scripts/build.cjs, for the TypeScript callers (tests). */
export declare const ROOT: string;
export declare const BUILD_DIR: string;
/** Build when an input changed since the last build; returns whether it built. */
export declare function ensureBuilt(options?: { force?: boolean }): boolean;
