import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { redactSecrets } from '../../src/domain/secrets.js';
import { createSecretBox } from './secretBox.js';

const box = createSecretBox(loadConfig({ env: { CTX_AUTH__SECRETS_KEY: 'k'.repeat(40) } }));

describe('connector secrets', () => {
  it('seals secret fields at any depth and opens them again', () => {
    const settings = {
      workspace: 'w',
      token: 'xoxb-1',
      nested: { password: 'p', api_key: 'k' },
      channels: ['dev'],
    };
    const sealed = box.seal(settings);
    expect(JSON.stringify(sealed)).not.toMatch(/xoxb-1|"p"|"k"/);
    expect(sealed).toMatchObject({
      workspace: 'w',
      channels: ['dev'],
      token: { sealed: expect.stringMatching(/^v1:/) as unknown },
    });
    expect(box.open(sealed)).toEqual(settings);
  });

  it('seals each value with a fresh nonce, and refuses a tampered one', () => {
    const a = box.seal({ token: 'same' }) as { token: { sealed: string } };
    const b = box.seal({ token: 'same' }) as { token: { sealed: string } };
    expect(a.token.sealed).not.toBe(b.token.sealed);
    const parts = a.token.sealed.split(':');
    parts[3] = Buffer.from('tampered').toString('base64');
    expect(() => box.open({ token: { sealed: parts.join(':') } })).toThrow();
  });

  it('shows secrets as *** whether sealed or not', () => {
    expect(redactSecrets({ token: { sealed: 'v1:x' }, secret: 'plain', name: 'n' })).toEqual({
      token: '***',
      secret: '***',
      name: 'n',
    });
  });
});
