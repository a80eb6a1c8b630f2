/** sha256 (hex) of the paths, sizes and modification times of `files`, relative to `root`. */
export declare function statFingerprint(files: readonly string[], root: string): string;
/** sha256 (hex) of the paths and contents of `files`, relative to `root`. */
export declare function contentFingerprint(files: readonly string[], root: string): string;
