import path from 'node:path';
import { loadProject, MATERIALIZATION, type Layer } from '../models/project.ts';
import { selectModels, selectTests, type ModelSelection } from '../models/select.ts';

/** A model as `exledger ls` lists it. */
export interface ListedModel {
  /** `<layer>.<name>`. */
  id: string;
  layer: Layer;
  name: string;
  materialization: 'view' | 'table';
  /** Its declaration's tags (none for an undeclared model). */
  tags: string[];
  /** The models it reads. */
  references: string[];
  /** Its SQL file, relative to the working folder. */
  file: string;
}

/** A test as `exledger ls --resource-type test` lists it. */
export interface ListedTest {
  /** `<layer>/<name>`. */
  id: string;
  /** The model whose declaration generates it; null for a singular test (a .sql file). */
  model: string | null;
  /** The models it reads. */
  references: string[];
  /** Its .sql file, or the declaration it is generated from, relative to the working folder. */
  file: string;
}

/** What a selection picks: its models in build order, and the tests `exledger check` would run for it. */
export interface Listing {
  models: ListedModel[];
  tests: ListedTest[];
}

/**
 * The list job: what a selection picks from the SQL project (no database is opened), as
 * `exledger build --select` would build it and `exledger check --select` would test it.
 * @throws ConfigError for a selector that is malformed or matches nothing.
 */
export function listJob(selection: ModelSelection = {}): Listing {
  const project = loadProject();
  const { select = [], exclude = [] } = selection;
  const models = selectModels(project, select, exclude);
  const tests = select.length === 0 && exclude.length === 0 ? project.tests : selectTests(project, new Set(models.map((model) => model.id)));
  const relative = (file: string) => path.relative(process.cwd(), file);
  return {
    models: models.map((model) => ({
      id: model.id,
      layer: model.layer,
      name: model.name,
      materialization: MATERIALIZATION[model.layer],
      tags: [...(model.declaration?.tags ?? [])],
      references: [...model.references],
      file: relative(model.file),
    })),
    tests: tests.map((test) => ({ id: test.id, model: test.model ?? null, references: [...test.references], file: path.isAbsolute(test.file) ? relative(test.file) : test.file })),
  };
}
