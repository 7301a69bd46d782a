import { describe, expect, it } from 'vitest';
import { withoutPaths } from './withoutPaths.js';

describe('withoutPaths', () => {
  it('cuts each absolute path to its last name and leaves URLs whole', () => {
    expect(
      withoutPaths(
        "cannot load the weights of model X: Load model from /home/u/.cache/models/X/onnx/model.onnx failed; ENOSPC, write '/srv/.ctx/pgdata/base/5/1259'",
      ),
    ).toBe("cannot load the weights of model X: Load model from model.onnx failed; ENOSPC, write '1259'");
    expect(withoutPaths('Embedding server http://127.0.0.1:11434/v1/embeddings is unreachable')).toBe(
      'Embedding server http://127.0.0.1:11434/v1/embeddings is unreachable',
    );
  });
});
