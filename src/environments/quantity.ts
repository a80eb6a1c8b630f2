/**
 * Kubernetes resource quantities, parsed only as far as comparing requests with limits
 * needs. The rendered manifest keeps the string the person wrote.
 */

const CPU = /^(\d+(?:\.\d+)?)(m?)$/;
/** Binary units only: cdk8s-plus renders memory in Mi, which these convert to exactly. */
const MEMORY = /^(\d+)(Mi|Gi)$/;

const MEBIBYTES_PER_UNIT: Record<string, number> = { Mi: 1, Gi: 1024 };

/** `250m` -> 0.25, `2` -> 2; undefined when the text is no CPU quantity. */
export function parseCpu(text: string): number | undefined {
  const match = CPU.exec(text);
  if (!match) return undefined;
  const value = Number(match[1]);
  return match[2] === 'm' ? value / 1000 : value;
}

/** `256Mi` -> 256, `1Gi` -> 1024 (mebibytes); undefined when the text is no such quantity. */
export function parseMemory(text: string): number | undefined {
  const match = MEMORY.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * MEBIBYTES_PER_UNIT[match[2]!]!;
}

/**
 * A memory quantity as validated (the schema's resources): the text the person wrote, which
 * the manifests and every JSON of the values show (toJSON), and its mebibytes, parsed once.
 */
export class MemoryQuantity {
  constructor(
    readonly text: string,
    readonly mebibytes: number,
  ) {}

  toJSON(): string {
    return this.text;
  }

  toString(): string {
    return this.text;
  }
}

/** A memory quantity the schema has accepted (parseMemory knows it) as a MemoryQuantity. */
export function memoryQuantityOf(text: string): MemoryQuantity {
  const mebibytes = parseMemory(text);
  if (mebibytes === undefined) throw new Error(`"${text}" is no memory quantity in Mi or Gi`);
  return new MemoryQuantity(text, mebibytes);
}
