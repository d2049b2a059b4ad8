import { ConfigError } from '../errors.ts';
import { LAYERS, type Layer, type Model, type Project, type SqlTest } from './project.ts';

/**
 * Node selection (after dbt's `--select`): which models a build, a check, an export or `exledger
 * ls` works on, written as selectors over the project's models and their references.
 *
 * - `fees_monthly` (when only one layer has it) or `marts.fees_monthly`: that model;
 * - `+model`: it and everything it reads, transitively; `model+`: it and everything that reads it;
 *   `+model+`: both;
 * - `layer:staging`, `layer:intermediate`, `layer:marts`: every model of the layer;
 * - `tag:fees`: every model whose declaration (sql/<layer>/_models.ts) carries the tag.
 *
 * `+` works on `layer:` and `tag:` too (`tag:fees+`). Several selectors are a union; `--exclude`
 * takes the same forms and removes what they match.
 */

/** The selector forms, for error hints and `--help`. */
export const SELECTOR_FORMS = 'model (fees_monthly, or marts.fees_monthly), +model (with its ancestors), model+ (with its descendants), +model+, layer:staging|intermediate|marts, tag:<tag>';

const NAME = /^[a-z_][a-z0-9_]*$/;
const MODEL = /^(?:(staging|intermediate|marts)\.)?([a-z_][a-z0-9_]*)$/;

/** Which models a build, a check or a listing works on. */
export interface ModelSelection {
  /** Selectors of the models to work on. @default every model */
  select?: readonly string[];
  /** Selectors of models to leave out. @default none */
  exclude?: readonly string[];
}

/** One parsed selector. */
interface Selector {
  text: string;
  ancestors: boolean;
  descendants: boolean;
  method: 'model' | 'layer' | 'tag';
  value: string;
}

/**
 * Selectors as given on the command line: each value may hold several separated by spaces
 * (`--select "+fees_monthly tag:spot"`, as dbt takes them), empty ones dropped.
 */
export function splitSelectors(values: readonly (string | number)[] | undefined): string[] {
  return (values ?? []).flatMap((value) => String(value).split(/\s+/)).filter((text) => text !== '');
}

/**
 * The models `select` picks minus those `exclude` picks, in build order. No `select` picks every
 * model. `key` names the flag in errors.
 * @throws ConfigError naming the first selector that is malformed or matches nothing (with the
 *   valid forms), or saying that --exclude left nothing.
 */
export function selectModels(project: Project, select: readonly string[], exclude: readonly string[] = [], key = '--select'): Model[] {
  const chosen = select.length === 0 ? new Set(project.models.map((model) => model.id)) : union(project, select, key);
  const excluded = union(project, exclude, '--exclude');
  const models = project.models.filter((model) => chosen.has(model.id) && !excluded.has(model.id));
  if (models.length === 0) throw new ConfigError('--exclude', `"${exclude.join(' ')}" leaves no model of ${select.length === 0 ? 'the project' : `"${select.join(' ')}"`} to work on`);
  return models;
}

/**
 * The models each selector picks, selector after selector, each once; a selector's own models by
 * layer then name (the order `exledger export` writes them in, its selectors' order).
 * @throws ConfigError as selectModels.
 */
export function selectModelsInOrder(project: Project, select: readonly string[], key: string): Model[] {
  const chosen: Model[] = [];
  const byLayerAndName = [...project.models].sort((a, b) => LAYERS.indexOf(a.layer) - LAYERS.indexOf(b.layer) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const text of select) {
    const ids = resolveSelector(project, parseSelector(text, project, key), key);
    for (const model of byLayerAndName) if (ids.has(model.id) && !chosen.includes(model)) chosen.push(model);
  }
  return chosen;
}

/**
 * The tests that concern the selected models (`selected`: their ids): the generic tests of their
 * declarations, and the singular tests that read at least one of them.
 */
export function selectTests(project: Project, selected: ReadonlySet<string>): SqlTest[] {
  return project.tests.filter((test) => (test.model === undefined ? test.references.some((reference) => selected.has(reference)) : selected.has(test.model)));
}

/** The tags the project's declarations carry, sorted. */
export function projectTags(project: Project): string[] {
  return [...new Set(project.models.flatMap((model) => model.declaration?.tags ?? []))].sort();
}

function union(project: Project, selectors: readonly string[], key: string): Set<string> {
  const ids = new Set<string>();
  for (const text of selectors) for (const id of resolveSelector(project, parseSelector(text, project, key), key)) ids.add(id);
  return ids;
}

function parseSelector(text: string, project: Project, key: string): Selector {
  let body = text;
  const ancestors = body.startsWith('+');
  if (ancestors) body = body.slice(1);
  const descendants = body.endsWith('+');
  if (descendants) body = body.slice(0, -1);
  const colon = body.indexOf(':');
  if (colon >= 0) {
    const method = body.slice(0, colon);
    const value = body.slice(colon + 1);
    if (method === 'layer') {
      if (!(LAYERS as readonly string[]).includes(value)) throw selectorError(key, text, `is not a layer; the layers are ${LAYERS.map((layer) => `layer:${layer}`).join(', ')}`, project);
      return { text, ancestors, descendants, method, value };
    }
    if (method === 'tag') {
      if (!NAME.test(value)) throw selectorError(key, text, 'is not a tag (a snake_case name)', project);
      return { text, ancestors, descendants, method, value };
    }
    throw selectorError(key, text, `has an unknown method "${method}:" (the methods are layer: and tag:)`, project);
  }
  if (!MODEL.test(body)) throw selectorError(key, text, 'is not a selector', project);
  return { text, ancestors, descendants, method: 'model', value: body };
}

function resolveSelector(project: Project, selector: Selector, key: string): Set<string> {
  const { method, value, text } = selector;
  let base: Model[];
  if (method === 'layer') {
    base = project.models.filter((model) => model.layer === (value as Layer));
    if (base.length === 0) throw selectorError(key, text, 'has no models in sql/', project);
  } else if (method === 'tag') {
    base = project.models.filter((model) => model.declaration?.tags?.includes(value) === true);
    if (base.length === 0) throw selectorError(key, text, 'matches no model (no declaration carries the tag)', project);
  } else {
    base = project.models.filter((model) => (value.includes('.') ? model.id === value : model.name === value));
    if (base.length === 0) throw selectorError(key, text, 'is not a model of the project (no such file in sql/<layer>/)', project);
    if (base.length > 1) throw selectorError(key, text, `is in several layers (${base.map((model) => model.id).join(', ')}): name one`, project);
  }
  const ids = new Set(base.map((model) => model.id));
  if (selector.ancestors) for (const id of walk(project, base, (model) => model.references)) ids.add(id);
  if (selector.descendants) {
    const readers = new Map<string, string[]>();
    for (const model of project.models) for (const reference of model.references) readers.set(reference, [...(readers.get(reference) ?? []), model.id]);
    for (const id of walk(project, base, (model) => readers.get(model.id) ?? [])) ids.add(id);
  }
  return ids;
}

/** The ids reached from `start` by following `next` (references, or readers), transitively. */
function walk(project: Project, start: readonly Model[], next: (model: Model) => readonly string[]): Set<string> {
  const byId = new Map(project.models.map((model) => [model.id, model]));
  const seen = new Set<string>();
  const queue = [...start];
  while (queue.length > 0) {
    for (const id of next(queue.pop()!)) {
      if (seen.has(id)) continue;
      seen.add(id);
      const model = byId.get(id);
      if (model !== undefined) queue.push(model);
    }
  }
  return seen;
}

function selectorError(key: string, text: string, reason: string, project: Project): ConfigError {
  const tags = projectTags(project);
  return new ConfigError(key, `"${text}" ${reason}`, { hint: `select with ${SELECTOR_FORMS}${tags.length === 0 ? '' : ` (tags: ${tags.join(', ')})`}; exledger ls lists the models` });
}
