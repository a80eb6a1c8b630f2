import type { Exemption, Finding, GateResult } from './gate';

/** `<environment> <file> <Kind>/<name>: <rule>: <what to change>` */
export function formatFinding(finding: Finding): string {
  return `${finding.environment} ${finding.file} ${finding.object}: ${finding.rule}: ${finding.message}`;
}

/** `exempt <environment> <file> <Kind>/<name>: <rule>: "<reason>"`, flagged when it suppresses nothing. */
export function formatExemption(exemption: Exemption): string {
  const unused = exemption.used ? '' : ' (suppresses nothing: remove it?)';
  return `exempt ${exemption.environment} ${exemption.file} ${exemption.object}: ${exemption.rule}: ${JSON.stringify(exemption.reason)}${unused}`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** `N objects in M files checked, K findings, E exemptions` */
export function formatSummary(result: GateResult): string {
  return `${count(result.objects, 'object')} in ${count(result.files, 'file')} checked, ${count(result.findings.length, 'finding')}, ${count(result.exemptions.length, 'exemption')}`;
}

/** The text report: findings, then the exemptions in force, then the summary line. */
export function formatText(result: GateResult): string[] {
  return [...result.findings.map(formatFinding), ...result.exemptions.map(formatExemption), formatSummary(result)];
}

/** The same report as one JSON document, for tools. */
export function formatJson(result: GateResult): string {
  return JSON.stringify({ ...result, summary: formatSummary(result) }, null, 2);
}
