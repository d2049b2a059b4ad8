import { LAYERS } from '../models/project.ts';
import { escapeHtml } from './html.ts';

/** The columns of the graph, left to right: the raw tables the staging models read, then the model layers. */
export const LINEAGE_LAYERS = ['raw', ...LAYERS] as const;
export type LineageLayer = (typeof LINEAGE_LAYERS)[number];

/**
 * The lineage graph of the documentation site, laid out here and drawn as inline SVG (no
 * library: the DAG is a few dozen models in three layers, and a layout by layer columns is
 * what a reader of a dbt project expects; a general graph library such as dagre would bring its
 * own layers, and a browser library would need scripts the site does not have).
 *
 * Columns: the raw tables, then staging, intermediate and marts, each layer split into as many columns as its
 * longest chain of models reading models of the same layer, so every edge runs left to right.
 * Within a column, nodes are ordered by the mean position of their neighbours (a few sweeps of
 * the barycentre heuristic), which keeps most edges short and uncrossed. Labels are set in a
 * monospace font, whose advance is known (0.6 em), so each column is as wide as its longest label.
 */

/** A model (or a raw table) in the graph. */
export interface LineageNode {
  /** `<layer>.<name>` (`raw.<stream>` for a raw table). */
  id: string;
  layer: LineageLayer;
  /** What the box shows (the model's name). */
  label: string;
}

/** `from` is read by `to`. */
export interface LineageEdge {
  from: string;
  to: string;
}

/** A node's box, in SVG user units. */
export interface PlacedNode extends LineageNode {
  column: number;
  x: number;
  y: number;
  width: number;
  height: number;
  /** The label's width as laid out (at most `width` less the padding). */
  labelWidth: number;
}

/** A laid-out graph. */
export interface LineageLayout {
  width: number;
  height: number;
  nodes: PlacedNode[];
  edges: LineageEdge[];
  /** Each layer's first column's x, for its heading. */
  layers: { layer: LineageLayer; x: number }[];
}

/** Font size of the labels; the monospace advance is 0.6 em (DejaVu Sans Mono, Liberation Mono, Courier, Menlo). */
export const FONT_SIZE = 12;
const ADVANCE = 0.61;
const PAD_X = 10;
const NODE_HEIGHT = 24;
const ROW_GAP = 10;
const COLUMN_GAP = 44;
const MARGIN = 12;
const HEADING = 22;

/** The width a label takes in the graph's font. */
export function labelWidth(label: string): number {
  return Math.ceil([...label].length * FONT_SIZE * ADVANCE);
}

/** Places the nodes in layer columns (see the module comment). Edges whose ends are not both nodes are dropped. */
export function layoutLineage(nodes: readonly LineageNode[], allEdges: readonly LineageEdge[]): LineageLayout {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const edges = allEdges.filter((edge) => byId.has(edge.from) && byId.has(edge.to) && edge.from !== edge.to);
  const parents = new Map<string, string[]>(nodes.map((node) => [node.id, []]));
  const children = new Map<string, string[]>(nodes.map((node) => [node.id, []]));
  for (const edge of edges) {
    parents.get(edge.to)!.push(edge.from);
    children.get(edge.from)!.push(edge.to);
  }

  // Depth within the layer: the longest chain of same-layer parents above the node.
  const depth = new Map<string, number>();
  const depthOf = (id: string, trail: Set<string>): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (trail.has(id)) return 0; // a cycle (loadProject refuses them); do not recurse forever
    trail.add(id);
    const node = byId.get(id)!;
    const sameLayer = parents.get(id)!.filter((parent) => byId.get(parent)!.layer === node.layer);
    const value = sameLayer.length === 0 ? 0 : Math.max(...sameLayer.map((parent) => depthOf(parent, trail))) + 1;
    trail.delete(id);
    depth.set(id, value);
    return value;
  };
  const layersPresent = LINEAGE_LAYERS.filter((layer) => nodes.some((node) => node.layer === layer));
  const firstColumn = new Map<LineageLayer, number>();
  let columnCount = 0;
  for (const layer of layersPresent) {
    firstColumn.set(layer, columnCount);
    columnCount += Math.max(...nodes.filter((node) => node.layer === layer).map((node) => depthOf(node.id, new Set()))) + 1;
  }
  const columnOf = (id: string) => firstColumn.get(byId.get(id)!.layer)! + depth.get(id)!;

  const columns: string[][] = Array.from({ length: columnCount }, () => []);
  for (const node of [...nodes].sort((a, b) => a.label.localeCompare(b.label))) columns[columnOf(node.id)]!.push(node.id);

  // Barycentre sweeps: order each column by the mean row of its neighbours in the columns already placed.
  const rowOf = new Map<string, number>();
  const index = () => columns.forEach((column) => column.forEach((id, row) => rowOf.set(id, row / Math.max(1, column.length - 1))));
  index();
  const reorder = (column: string[], neighbours: (id: string) => string[]) => {
    const keyed = column.map((id, row) => {
      const around = neighbours(id).map((other) => rowOf.get(other)!);
      return { id, key: around.length === 0 ? row / Math.max(1, column.length - 1) : around.reduce((sum, value) => sum + value, 0) / around.length, row };
    });
    keyed.sort((a, b) => a.key - b.key || a.row - b.row);
    column.splice(0, column.length, ...keyed.map((entry) => entry.id));
    index();
  };
  for (let sweep = 0; sweep < 4; sweep += 1) {
    for (let column = 1; column < columnCount; column += 1) reorder(columns[column]!, (id) => parents.get(id)!);
    for (let column = columnCount - 2; column >= 0; column -= 1) reorder(columns[column]!, (id) => children.get(id)!);
  }

  // Geometry: each column as wide as its longest label, columns centred on the tallest.
  const widths = columns.map((column) => Math.max(0, ...column.map((id) => labelWidth(byId.get(id)!.label))) + 2 * PAD_X);
  const tallest = Math.max(0, ...columns.map((column) => column.length));
  const innerHeight = tallest * NODE_HEIGHT + Math.max(0, tallest - 1) * ROW_GAP;
  const placed: PlacedNode[] = [];
  const layerHeadings: { layer: LineageLayer; x: number }[] = [];
  let x = MARGIN;
  columns.forEach((column, columnIndex) => {
    const layer = layersPresent.find((candidate) => firstColumn.get(candidate) === columnIndex);
    if (layer !== undefined) layerHeadings.push({ layer, x });
    const height = column.length * NODE_HEIGHT + Math.max(0, column.length - 1) * ROW_GAP;
    let y = MARGIN + HEADING + (innerHeight - height) / 2;
    for (const id of column) {
      const node = byId.get(id)!;
      placed.push({ ...node, column: columnIndex, x, y, width: widths[columnIndex]!, height: NODE_HEIGHT, labelWidth: labelWidth(node.label) });
      y += NODE_HEIGHT + ROW_GAP;
    }
    x += widths[columnIndex]! + COLUMN_GAP;
  });
  const width = Math.max(x - COLUMN_GAP + MARGIN, MARGIN * 2);
  return { width, height: MARGIN * 2 + HEADING + innerHeight, nodes: placed, edges, layers: layerHeadings };
}

/** Options of renderLineageSvg. */
export interface LineageSvgOptions {
  /** The link of a node's box. */
  href: (id: string) => string;
  /** The model the graph is about, drawn highlighted. */
  focus?: string;
  /** The graph's accessible name. */
  title: string;
}

/**
 * The layout as an SVG element, inline in a page (HTML puts it in the SVG namespace, so it has no
 * `xmlns`; add one to read it as a file of its own): a box per model (a link to its page, the
 * full id as its tooltip), a curve per reference, a heading per layer. Everything from the
 * project is escaped.
 */
export function renderLineageSvg(layout: LineageLayout, options: LineageSvgOptions): string {
  const byId = new Map(layout.nodes.map((node) => [node.id, node]));
  const round = (value: number) => Math.round(value * 10) / 10;
  const edges = layout.edges.map((edge) => {
    const from = byId.get(edge.from)!;
    const to = byId.get(edge.to)!;
    const x1 = from.x + from.width;
    const y1 = from.y + from.height / 2;
    const x2 = to.x;
    const y2 = to.y + to.height / 2;
    const bend = Math.max(24, (x2 - x1) / 2);
    const focused = options.focus !== undefined && (edge.from === options.focus || edge.to === options.focus);
    return `<path class="edge${focused ? ' focus' : ''}" d="M${round(x1)},${round(y1)} C${round(x1 + bend)},${round(y1)} ${round(x2 - bend)},${round(y2)} ${round(x2)},${round(y2)}"/>`;
  });
  const nodes = layout.nodes.map((node) => {
    const classes = `node ${node.layer}${node.id === options.focus ? ' focus' : ''}`;
    return (
      `<a href="${escapeHtml(options.href(node.id))}" data-model="${escapeHtml(node.id)}"><g class="${classes}"><title>${escapeHtml(node.id)}</title>` +
      `<rect x="${round(node.x)}" y="${round(node.y)}" width="${round(node.width)}" height="${node.height}" rx="4"/>` +
      `<text x="${round(node.x + PAD_X)}" y="${round(node.y + node.height / 2 + FONT_SIZE * 0.35)}" textLength="${node.labelWidth}" lengthAdjust="spacingAndGlyphs">${escapeHtml(node.label)}</text></g></a>`
    );
  });
  const headings = layout.layers.map((heading) => `<text class="layer-heading" x="${round(heading.x)}" y="${MARGIN + FONT_SIZE}">${escapeHtml(heading.layer)}</text>`);
  return [
    `<svg class="lineage" width="${round(layout.width)}" height="${round(layout.height)}" viewBox="0 0 ${round(layout.width)} ${round(layout.height)}" role="img" aria-label="${escapeHtml(options.title)}">`,
    `<title>${escapeHtml(options.title)}</title>`,
    ...headings,
    `<g class="edges">`,
    ...edges,
    `</g>`,
    `<g class="nodes">`,
    ...nodes,
    `</g>`,
    `</svg>`,
  ].join('\n');
}
