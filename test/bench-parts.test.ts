import { describe, expect, it } from 'vitest';
import { benchParts } from '../src/commands/bench';
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
