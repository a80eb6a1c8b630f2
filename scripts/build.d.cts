/** Types of scripts/build.cjs, for the TypeScript callers (tests). */
export declare const ROOT: string;
export declare const BUILD_DIR: string;
/** Build when an input changed since the last build; returns whether it built. */
export declare function ensureBuilt(options?: { force?: boolean }): boolean;
/** sha256 (hex) of the paths, sizes and modification times of `files`, relative to `root` (default ROOT). */
export declare function statFingerprint(files: readonly string[], root?: string): string;
/** sha256 (hex) of the paths and contents of `files`, relative to `root` (default ROOT). */
export declare function contentFingerprint(files: readonly string[], root?: string): string;
