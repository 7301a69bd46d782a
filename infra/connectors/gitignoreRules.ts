import ignore, { type Ignore } from 'ignore';

interface IgnoreLevel {
  /** The directory holding the .gitignore, relative to the root ('' for the root itself). */
  readonly base: string;
  readonly rules: Ignore;
}

/**
 * The .gitignore files in effect for one directory: its own and its ancestors' up to the scanned
 * root. As in git, a deeper file's rules (negations included) override a shallower one's.
 */
export class GitignoreRules {
  private constructor(private readonly levels: readonly IgnoreLevel[]) {}

  static readonly none = new GitignoreRules([]);

  /** The rules for a child directory that has a .gitignore with `content`. */
  withFile(base: string, content: string): GitignoreRules {
    return new GitignoreRules([...this.levels, { base, rules: ignore().add(content) }]);
  }

  ignores(relativePath: string, isDirectory: boolean): boolean {
    let ignored = false;
    for (const { base, rules } of this.levels) {
      const local = base === '' ? relativePath : relativePath.slice(base.length + 1);
      const verdict = rules.test(isDirectory ? `${local}/` : local);
      if (verdict.ignored) ignored = true;
      else if (verdict.unignored) ignored = false;
    }
    return ignored;
  }
}
