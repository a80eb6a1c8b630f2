import { describe, expect, it } from 'vitest';
import { benchParts, phaseRows } from '../src/commands/bench';
import { UsageError } from '../src/base/errors';

describe('npm run bench --only', () => {
  it('measures synth and the gate by default, and the parts named, in their fixed order', () => {
    expect(benchParts(undefined)).toEqual(['synth', 'gate']);
    expect(benchParts('e2e')).toEqual(['e2e']);
    expect(benchParts('e2e,synth')).toEqual(['synth', 'e2e']);
  });

  it('refuses a part it does not know, naming the option and the parts', () => {
    expect(() => benchParts('synth,speed')).toThrow(UsageError);
    expect(() => benchParts('synth,speed')).toThrow('--only "synth,speed" must name parts among synth, gate, e2e');
    expect(() => benchParts('')).toThrow(UsageError);
  });
});

describe("the e2e's phases as npm run bench -- --only e2e prints them", () => {
  it('times each phase from the one before, and one that ran beside the others from its own start', () => {
    expect(
      phaseRows([
        { phase: 'control plane started', seconds: 9.4 },
        { phase: 'bootstrapped', seconds: 17.7 },
        { phase: 'dry-run', seconds: 45.9, since: 17.7 },
        { phase: 'gateway-crds (wave 0) Synced and Healthy', seconds: 71 },
        { phase: "operator's sync", seconds: 212.9 },
      ]),
    ).toEqual([
      '| control plane started | 9.4 s | 9.4 s |',
      '| bootstrapped | 17.7 s | 8.3 s |',
      '| dry-run (beside, from 17.7 s) | 45.9 s | 28.2 s |',
      '| gateway-crds (wave 0) Synced and Healthy | 71.0 s | 53.3 s |',
      "| operator's sync | 212.9 s | 141.9 s |",
    ]);
  });
});
