import { describe, expect, it } from 'vitest';
import { codeAwareQuery, codeAwareText, identifierParts } from './codeTerms.js';

describe('code-aware terms', () => {
  it('splits camelCase, PascalCase, snake_case, dotted paths and digits', () => {
    expect(identifierParts('getUserById')).toEqual(['get', 'user', 'by', 'id']);
    expect(identifierParts('HTTPServer2Go')).toEqual(['http', 'server', 'go']);
    expect(identifierParts('_process_and_sort')).toEqual(['process', 'and', 'sort']);
    expect(identifierParts('os.path.join')).toEqual(['os', 'path', 'join']);
    expect(identifierParts('parse2json')).toEqual(['parse', 'json']);
    expect(identifierParts('int64ToUtf8')).toEqual(['int', '64', 'to', 'utf']);
    expect(identifierParts('plain')).toEqual([]);
    expect(identifierParts('$scope.userId')).toEqual(['scope', 'user', 'id']);
    expect(identifierParts('HTTP')).toEqual([]);
  });

  it('leaves out parts of one character, which every identifier-dense text would repeat', () => {
    expect(identifierParts('getX')).toEqual(['get']);
    expect(identifierParts('w63z')).toEqual(['63']);
    expect(codeAwareText('let p = vec3.x;')).toBe('let p = vec3.x;\nvec');
    expect(codeAwareQuery('getX')).toBe('getX get');
  });

  it('keeps the text whole and appends the words of its identifiers', () => {
    const text = 'const user = repo.getUserById(42);';
    const indexed = codeAwareText(text);
    expect(indexed.startsWith(text)).toBe(true);
    expect(indexed.slice(text.length).split(/\s+/)).toEqual(
      expect.arrayContaining(['repo', 'get', 'user', 'by', 'id']),
    );
  });

  it('counts the names a function defines again, and tags the language its syntax gives away', () => {
    const added = codeAwareText('def is_iterable(self, obj):\n    return hasattr(obj, "__iter__")')
      .split('\n')
      .at(-1)!
      .split(' ');
    expect(added.filter((word) => word === 'iterable')).toHaveLength(2);
    expect(added).toContain('python');
    expect(added).not.toContain('self');
  });

  it('adds nothing to prose, hyphenated words included', () => {
    expect(codeAwareText('an anti-inflammatory, well-known drug')).toBe('an anti-inflammatory, well-known drug');
    expect(codeAwareText('Cobalt harbours shelter the fishing fleet')).toBe(
      'Cobalt harbours shelter the fishing fleet',
    );
    expect(codeAwareQuery('get user by id')).toBe('get user by id');
    expect(codeAwareQuery('getUserById')).toBe('getUserById get user by id');
  });
});
