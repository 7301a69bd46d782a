import {
  PROTECTED_FIELDS,
  type AnnotationFields,
  type ProtectedField,
  type StoredAnnotationFields,
} from './annotations.js';
import type { Opener, ProtectedText, Sealer } from './protectedText.js';

/** The annotation fields as a reader sees them: free text opened, null where its key was forgotten. */
export type OpenedAnnotationFields = Omit<AnnotationFields, ProtectedField> &
  Record<ProtectedField, string | null>;

/** The one place stored annotation fields are opened for reading. */
export const openFields = (fields: StoredAnnotationFields, opener: Opener): OpenedAnnotationFields => ({
  ...fields,
  notes: opener.open(fields.notes),
  summary: opener.open(fields.summary),
});

/** True when some free text of these fields was forgotten. */
export const hasForgotten = (fields: Pick<OpenedAnnotationFields, ProtectedField>): boolean =>
  PROTECTED_FIELDS.some((field) => fields[field] === null);

/** Changes as an event records them: non-empty free text sealed with the writer's key. */
export const sealChanges = (
  changes: Partial<AnnotationFields>,
  sealer: Sealer,
): Partial<StoredAnnotationFields> => {
  const sealed: Partial<StoredAnnotationFields> = { ...changes };
  for (const field of PROTECTED_FIELDS) {
    const text = changes[field];
    if (text) sealed[field] = sealer.seal(text);
  }
  return sealed;
};

/** Every free-text value of these fields, to load the keys that open them in one go. */
export const protectedValuesOf = function* (
  fields: Iterable<Partial<StoredAnnotationFields> | undefined>,
): Generator<ProtectedText> {
  for (const f of fields) {
    for (const field of PROTECTED_FIELDS) {
      const value = f?.[field];
      if (value !== undefined) yield value;
    }
  }
};
