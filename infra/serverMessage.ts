/**
 * The message an HTTP server put in its error body: `error.message` (OpenAI), `error` (Ollama, TEI),
 * `message` (Cohere, Jina), or else the text itself.
 */
export const serverMessage = (text: string): string => {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof body.error === 'string') return body.error;
    if (typeof body.error === 'object' && body.error !== null && 'message' in body.error) {
      return String(body.error.message);
    }
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON: the text itself is the message
  }
  return text.slice(0, 500);
};
