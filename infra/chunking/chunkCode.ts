import type { Node } from 'web-tree-sitter';
import type { ChunkDraft, ChunkLabel, RowRange } from './chunkDraft.js';
import type { CodeLanguage } from './contentTypes.js';
import { packRows, paragraphBlocks } from './packRows.js';
import type { SourceText } from './sourceText.js';
import type { ChunkBudget } from './tokenBudget.js';
import { parserFor } from './treeSitterParsers.js';

/** Beyond this size a file is cut into line windows unparsed: it is generated or minified. */
const MAX_PARSE_CHARS = 2_000_000;

/** Node types, across the shipped grammars, that declare a named symbol, and the chunk kind for each. */
const SYMBOL_KINDS: Readonly<Record<string, string>> = {
  function_declaration: 'function',
  generator_function_declaration: 'function',
  function_definition: 'function',
  function_item: 'function',
  method: 'function',
  singleton_method: 'function',
  method_definition: 'method',
  method_declaration: 'method',
  constructor_declaration: 'method',
  abstract_method_signature: 'method',
  class_declaration: 'class',
  abstract_class_declaration: 'class',
  class_definition: 'class',
  class_specifier: 'class',
  class: 'class',
  record_declaration: 'class',
  interface_declaration: 'interface',
  type_alias_declaration: 'type',
  type_declaration: 'type',
  enum_declaration: 'enum',
  enum_item: 'enum',
  enum_specifier: 'enum',
  struct_item: 'struct',
  struct_specifier: 'struct',
  struct_declaration: 'struct',
  trait_item: 'trait',
  trait_declaration: 'trait',
  impl_item: 'impl',
  internal_module: 'module',
  module: 'module',
  mod_item: 'module',
  namespace_declaration: 'namespace',
  namespace_definition: 'namespace',
  macro_definition: 'macro',
};

/** Nodes that wrap a declaration (export, decorators, templates, `declare`, TS namespaces). */
const WRAPPERS = new Set([
  'export_statement',
  'decorated_definition',
  'template_declaration',
  'ambient_declaration',
  'expression_statement',
]);

/** Siblings that belong to the declaration right below them. */
const LEADING_TRIVIA = new Set(['comment', 'line_comment', 'block_comment', 'attribute_item', 'decorator']);

/** Kinds whose nested functions are methods. */
const MEMBER_CONTAINERS = new Set(['class', 'interface', 'struct', 'trait', 'impl', 'enum']);

const FUNCTION_VALUES = new Set(['arrow_function', 'function_expression', 'function', 'generator_function']);

/** A line with nothing worth a chunk of its own: blank, closing brackets, Ruby's `end`. */
const TRIVIAL_LINE = /^\s*(?:[\])};,]+|end)?\s*$/;

interface SymbolInfo {
  readonly kind: string;
  readonly name: string | null;
  readonly body: Node | null;
}

interface Unit extends RowRange, ChunkLabel {
  readonly body: Node | null;
}

interface Context {
  readonly source: SourceText;
  readonly budget: ChunkBudget;
}

/**
 * Code: one chunk per top-level declaration (with its leading comments), named by its symbol. A
 * declaration over the budget is split into its members (methods, nested declarations) when it
 * has any, otherwise into line windows. Code between declarations becomes chunks of kind `lines`.
 * Returns null when the file cannot be parsed, so the caller falls back to line windows.
 */
export const chunkCode = async (
  source: SourceText,
  language: CodeLanguage,
  budget: ChunkBudget,
): Promise<ChunkDraft[] | null> => {
  const text = source.lines.join('\n');
  if (text.length > MAX_PARSE_CHARS) return null;
  let tree;
  try {
    tree = (await parserFor(language)).parse(text);
  } catch {
    return null;
  }
  if (!tree) return null;
  try {
    const context: Context = { source, budget };
    const drafts = layout(context, collectUnits(tree.rootNode, null), 0, source.lastRow, {
      kind: 'lines',
      symbol: null,
    });
    return drafts.length > 0 ? drafts : null;
  } finally {
    tree.delete();
  }
};

const layout = (
  context: Context,
  units: readonly Unit[],
  from: number,
  to: number,
  gapLabel: ChunkLabel,
): ChunkDraft[] => {
  const drafts: ChunkDraft[] = [];
  let cursor = from;
  for (const unit of units) {
    // Two declarations can share a row; the row stays with the first.
    const start = Math.max(unit.start, cursor);
    if (start > unit.end) continue;
    if (start > cursor) drafts.push(...gapChunks(context, cursor, start - 1, gapLabel));
    drafts.push(...unitChunks(context, { ...unit, start }));
    cursor = unit.end + 1;
  }
  if (cursor <= to) drafts.push(...gapChunks(context, cursor, to, gapLabel));
  return drafts;
};

const unitChunks = (context: Context, unit: Unit): ChunkDraft[] => {
  const { source, budget } = context;
  const label = { kind: unit.kind, symbol: unit.symbol };
  if (source.cost(unit.start, unit.end) <= budget.maxTokens) {
    return [
      {
        start: unit.start,
        end: unit.end,
        text: source.text(unit.start, unit.end),
        ...label,
        wholeLines: true,
      },
    ];
  }
  const members = unit.body ? collectUnits(unit.body, unit) : [];
  if (members.length > 0) return layout(context, members, unit.start, unit.end, label);
  return packRows(source, paragraphBlocks(source, unit.start, unit.end), budget, label);
};

/** Leading blank lines and closing brackets stay with the chunk above (see coverAllRows). */
const gapChunks = (context: Context, start: number, end: number, label: ChunkLabel): ChunkDraft[] => {
  const { source, budget } = context;
  let first = start;
  while (first <= end && TRIVIAL_LINE.test(source.line(first))) first++;
  return first <= end ? packRows(source, paragraphBlocks(source, first, end), budget, label) : [];
};

const collectUnits = (container: Node, parent: ChunkLabel | null): Unit[] => {
  const children = container.namedChildren;
  const units: Unit[] = [];
  children.forEach((child, index) => {
    const symbol = describeSymbol(child, 0);
    if (!symbol) return;
    let start = child.startPosition.row;
    for (let previous = index - 1; previous >= 0; previous--) {
      const sibling = children[previous];
      if (!sibling || !LEADING_TRIVIA.has(sibling.type) || lastRowOf(sibling) < start - 1) break;
      start = sibling.startPosition.row;
    }
    const inMemberContainer = parent?.kind != null && MEMBER_CONTAINERS.has(parent.kind);
    units.push({
      start,
      end: lastRowOf(child),
      kind: inMemberContainer && symbol.kind === 'function' ? 'method' : symbol.kind,
      symbol: symbol.name && parent?.symbol ? `${parent.symbol}.${symbol.name}` : symbol.name,
      body: symbol.body,
    });
  });
  return units;
};

const describeSymbol = (node: Node, depth: number): SymbolInfo | null => {
  if (node.type === 'lexical_declaration' || node.type === 'variable_declaration')
    return describeBinding(node);
  const kind = SYMBOL_KINDS[node.type];
  if (kind) return { kind: refineKind(node, kind), name: nameOf(node), body: node.childForFieldName('body') };
  if (!WRAPPERS.has(node.type) || depth >= 2) return null;
  for (const child of node.namedChildren) {
    const symbol = describeSymbol(child, depth + 1);
    if (symbol) return symbol;
  }
  return null;
};

/** `const handler = () => …` and `const Widget = class …` declare functions and classes too. */
const describeBinding = (node: Node): SymbolInfo | null => {
  const declarators = node.namedChildren.filter((child) => child.type === 'variable_declarator');
  const value = declarators.length === 1 ? declarators[0]?.childForFieldName('value') : null;
  if (!value) return null;
  const name = compact(declarators[0]?.childForFieldName('name')?.text);
  if (FUNCTION_VALUES.has(value.type)) return { kind: 'function', name, body: null };
  if (value.type === 'class') return { kind: 'class', name, body: value.childForFieldName('body') };
  return null;
};

const refineKind = (node: Node, kind: string): string => {
  if (node.type !== 'type_declaration') return kind;
  const specs = node.namedChildren.filter((child) => child.type === 'type_spec');
  const shape = specs.length === 1 ? specs[0]?.childForFieldName('type')?.type : undefined;
  if (shape === 'struct_type') return 'struct';
  if (shape === 'interface_type') return 'interface';
  return kind;
};

const nameOf = (node: Node): string | null => {
  switch (node.type) {
    case 'type_declaration': {
      const names = node.namedChildren
        .filter((child) => child.type === 'type_spec')
        .map((spec) => spec.childForFieldName('name')?.text)
        .filter((name): name is string => Boolean(name));
      return names.length > 0 ? names.join(', ') : null;
    }
    case 'impl_item':
      return compact(node.childForFieldName('type')?.text);
    case 'method_declaration': {
      const name = compact(node.childForFieldName('name')?.text);
      const receiver = node.childForFieldName('receiver');
      const receiverType = receiver?.namedChildren[0]?.childForFieldName('type')?.text;
      if (!receiverType || !name) return name;
      return `${receiverType.replace(/^\*/, '').replace(/\[.*\]$/, '')}.${name}`;
    }
    case 'function_definition': {
      let declarator = node.childForFieldName('declarator');
      if (!declarator) break;
      while (declarator.childForFieldName('declarator'))
        declarator = declarator.childForFieldName('declarator') ?? declarator;
      return compact(declarator.text);
    }
  }
  return compact(node.childForFieldName('name')?.text);
};

const compact = (text: string | undefined): string | null => {
  const name = text?.replace(/\s+/g, ' ').trim();
  return name ? name : null;
};

/** A node that ends at column 0 ends on the row before (it swallowed a newline). */
const lastRowOf = (node: Node): number => {
  const { row, column } = node.endPosition;
  return column === 0 && row > node.startPosition.row ? row - 1 : row;
};
