import ts from 'typescript';
import { UsageError } from '../tooling/cli';

/**
 * Precise edits of an environment file (`src/environments/<env>.ts`) with the TypeScript
 * compiler's parser: find the exported object literal, walk to a property, and splice
 * only the text of that value (or insert one property). Everything else, comments and
 * formatting included, stays byte for byte.
 */

/** `export const staging = { ... } satisfies EnvironmentInput;` -> the object literal. */
function exportedLiteral(source: ts.SourceFile, exportName: string, fileName: string): ts.ObjectLiteralExpression {
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    if (!statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) continue;
    for (const declaration of statement.declarationList.declarations) {
      if (!ts.isIdentifier(declaration.name) || declaration.name.text !== exportName || !declaration.initializer) continue;
      let expression: ts.Expression = declaration.initializer;
      while (ts.isSatisfiesExpression(expression) || ts.isAsExpression(expression) || ts.isParenthesizedExpression(expression)) {
        expression = expression.expression;
      }
      if (ts.isObjectLiteralExpression(expression)) return expression;
      throw new UsageError(`${fileName}: "${exportName}" is not an object literal; edit it by hand`);
    }
  }
  throw new UsageError(`${fileName}: no "export const ${exportName} = { ... }" found`);
}

function propertyName(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

function findProperty(literal: ts.ObjectLiteralExpression, key: string): ts.PropertyAssignment | undefined {
  for (const property of literal.properties) {
    if (ts.isPropertyAssignment(property) && propertyName(property.name) === key) return property;
  }
  return undefined;
}

function parse(text: string, fileName: string): ts.SourceFile {
  return ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** The quote the file already uses for strings (single when it has none). */
function quoteOf(source: ts.SourceFile): string {
  let quote: string | undefined;
  const visit = (node: ts.Node): void => {
    if (quote !== undefined) return;
    if (ts.isStringLiteral(node) && !ts.isImportDeclaration(node.parent)) {
      quote = node.getText(source).charAt(0);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return quote ?? "'";
}

function stringLiteral(value: string, quote: string): string {
  const json = JSON.stringify(value).slice(1, -1);
  return quote === '"' ? `"${json}"` : `'${json.replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

function keyText(key: string, quote: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : stringLiteral(key, quote);
}

/** `{ a: { b: 'v' } }` for the keys still missing below an existing object. */
function nestedValue(keys: readonly string[], value: string, quote: string): string {
  return keys.reduceRight((inner, key) => `{ ${keyText(key, quote)}: ${inner} }`, stringLiteral(value, quote));
}

/** Insert `key: value` as the last property of `literal`, in the literal's own layout. */
function insertProperty(text: string, source: ts.SourceFile, literal: ts.ObjectLiteralExpression, property: string): string {
  const properties = literal.properties;
  const closing = literal.getEnd() - 1; // the `}`
  if (properties.length === 0) {
    return `${text.slice(0, literal.getStart(source))}{ ${property} }${text.slice(literal.getEnd())}`;
  }
  const last = properties[properties.length - 1]!;
  const hasTrailingComma = properties.hasTrailingComma;
  const { line: startLine } = source.getLineAndCharacterOfPosition(literal.getStart(source));
  const { line: endLine } = source.getLineAndCharacterOfPosition(closing);
  if (startLine === endLine) {
    // One line: `{ blue: { tag: 'v1' } }` -> `{ blue: { tag: 'v1' }, green: { tag: 'v2' } }`.
    if (!hasTrailingComma) return `${text.slice(0, last.getEnd())}, ${property}${text.slice(last.getEnd())}`;
    const comma = text.indexOf(',', last.getEnd()) + 1;
    return `${text.slice(0, comma)} ${property},${text.slice(comma)}`;
  }
  // One property a line: a new line with the last property's indentation.
  const lastStart = last.getStart(source);
  const indentation = text.slice(text.lastIndexOf('\n', lastStart) + 1, lastStart);
  const afterLast = hasTrailingComma ? text.indexOf(',', last.getEnd()) + 1 : last.getEnd();
  const withComma = hasTrailingComma ? text : `${text.slice(0, afterLast)},${text.slice(afterLast)}`;
  const shift = hasTrailingComma ? 0 : 1;
  // After a comment that ends the last property's line, unless the `}` shares that line.
  const lineEnd = withComma.indexOf('\n', afterLast + shift);
  const at = lineEnd === -1 || lineEnd > closing + shift ? afterLast + shift : lineEnd;
  return `${withComma.slice(0, at)}\n${indentation}${property}${hasTrailingComma ? ',' : ''}${withComma.slice(at)}`;
}

/**
 * Set the string at `path` (e.g. `['image', 'tag']`) of the exported object literal,
 * creating the missing objects along the way; returns the new file text.
 */
export function setStringProperty(
  text: string,
  exportName: string,
  path: readonly string[],
  value: string,
  fileName = `${exportName}.ts`,
): string {
  const source = parse(text, fileName);
  const quote = quoteOf(source);
  let literal = exportedLiteral(source, exportName, fileName);
  for (let depth = 0; depth < path.length; depth += 1) {
    const key = path[depth]!;
    const property = findProperty(literal, key);
    const where = `${fileName}: ${exportName}.${path.slice(0, depth + 1).join('.')}`;
    if (property === undefined) {
      const inserted = `${keyText(key, quote)}: ${nestedValue(path.slice(depth + 1), value, quote)}`;
      return insertProperty(text, source, literal, inserted);
    }
    if (depth === path.length - 1) {
      const initializer = property.initializer;
      if (!ts.isStringLiteral(initializer) && !ts.isNoSubstitutionTemplateLiteral(initializer)) {
        throw new UsageError(`${where} is not a string literal; edit it by hand`);
      }
      return `${text.slice(0, initializer.getStart(source))}${stringLiteral(value, quote)}${text.slice(initializer.getEnd())}`;
    }
    if (!ts.isObjectLiteralExpression(property.initializer)) {
      throw new UsageError(`${where} is not an object literal; edit it by hand`);
    }
    literal = property.initializer;
  }
  throw new UsageError(`${fileName}: an empty property path cannot be set`);
}

/** The string literal at `path` of the exported object literal, or undefined when absent. */
export function readStringProperty(text: string, exportName: string, path: readonly string[]): string | undefined {
  const source = parse(text, `${exportName}.ts`);
  let node: ts.Expression = exportedLiteral(source, exportName, `${exportName}.ts`);
  for (const key of path) {
    if (!ts.isObjectLiteralExpression(node)) return undefined;
    const property = findProperty(node, key);
    if (property === undefined) return undefined;
    node = property.initializer;
  }
  return ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : undefined;
}
