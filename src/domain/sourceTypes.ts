/** The kinds of source a work-context search can be narrowed to. */
export const SOURCE_TYPES = ['file', 'slack', 'github', 'jira'] as const;

/** `file` for code and documents read from disk or git; otherwise the system the source names. */
export const sourceTypeOf = (source: string): string => {
  const system = /^(slack|github|jira)\b/i.exec(source)?.[1]?.toLowerCase();
  return system ?? 'file';
};
