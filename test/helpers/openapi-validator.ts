/**
 * The served document as a strict validator reads it: ajv in JSON Schema 2020-12 mode (OpenAPI
 * 3.1's dialect) with ajv-formats asserting `format` (uri, email, date-time, date), as Prism and
 * the strict validators integrators put in front of a server do. Request parts are judged as an
 * OpenAPI validator judges them: the JSON body as it is, query, path and header values coerced from
 * their text to the parameter's type (a repeated query parameter is an array).
 */
import _Ajv2020 from 'ajv/dist/2020.js';
import _addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

const Ajv2020 = _Ajv2020.default;
const addFormats = _addFormats.default;

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const ID = 'https://gatewayd.test/openapi.json';

const pointer = (...segments: string[]) => `${ID}#/${segments.map((s) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`;

/** A path value as the server reads it (a malformed escape stays as it is). */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export interface DocumentValidator {
  /** What is wrong with a request, as the document says; [] when it is document-valid. */
  request(
    method: string,
    path: string,
    parts: { path: Record<string, string>; query: Array<[string, string]>; headers: Record<string, string>; body: unknown },
  ): string[];
  /** What is wrong with an answer: an undeclared status, or a JSON body outside its schema; [] when none. */
  response(method: string, path: string, status: number, body: unknown, contentType: string | null): string[];
}

export function documentValidator(doc: Doc): DocumentValidator {
  const make = (coerce: boolean) => {
    const ajv = new Ajv2020({ strict: false, allErrors: false, coerceTypes: coerce ? 'array' : false, validateFormats: true });
    addFormats(ajv);
    ajv.addSchema({ ...doc, $id: ID });
    return ajv;
  };
  const plain = make(false);
  const coercing = make(true);
  const cache = new Map<string, ValidateFunction>();
  // Coercion works in place on a property, so a parameter's value is validated inside a holder.
  const compiled = (coerce: boolean, ref: string) => {
    const key = `${coerce}:${ref}`;
    let v = cache.get(key);
    if (!v) cache.set(key, (v = coerce ? coercing.compile({ type: 'object', properties: { value: { $ref: ref } } }) : plain.compile({ $ref: ref })));
    return v;
  };
  const errorsOf = (v: ValidateFunction) => (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim());

  return {
    request(method, path, parts) {
      const op = doc.paths[path]?.[method.toLowerCase()];
      if (!op) return [`no operation ${method} ${path}`];
      const out: string[] = [];
      const params = (op.parameters ?? []) as Array<{ name: string; in: string; required?: boolean }>;
      params.forEach((p, i) => {
        let value: unknown;
        if (p.in === 'query') {
          const values = parts.query.filter(([k]) => k === p.name).map(([, v]) => v);
          value = values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
        } else if (p.in === 'path') value = parts.path[p.name] === undefined ? undefined : decoded(parts.path[p.name]!);
        else if (p.in === 'header') value = Object.entries(parts.headers).find(([k]) => k.toLowerCase() === p.name.toLowerCase())?.[1];
        if (value === undefined) {
          if (p.required) out.push(`${p.in}.${p.name} is required`);
          return;
        }
        const v = compiled(true, pointer('paths', path, method.toLowerCase(), 'parameters', String(i), 'schema'));
        if (!v({ value })) out.push(...errorsOf(v).map((e) => `${p.in}.${p.name}${e.replace(/^\/value/, '')}`));
      });
      const known = new Set(params.filter((p) => p.in === 'query').map((p) => p.name));
      for (const [k] of parts.query) if (!known.has(k)) out.push(`query.${k} is not a parameter of the operation`);
      const body = op.requestBody as { required?: boolean; content?: Record<string, unknown> } | undefined;
      if (parts.body === undefined) {
        if (body?.required) out.push('the body is required');
      } else if (!body) out.push('the operation takes no body');
      else {
        const v = compiled(false, pointer('paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'));
        if (!v(parts.body)) out.push(...errorsOf(v).map((e) => `body${e}`));
      }
      return out;
    },
    response(method, path, status, body, contentType) {
      const op = doc.paths[path]?.[method.toLowerCase()];
      const declared = op?.responses?.[String(status)];
      if (!declared) return [`${status} is not a declared answer`];
      if (method === 'HEAD' || !declared.content) return [];
      const media = Object.keys(declared.content).find((m) => contentType?.startsWith(m));
      if (!media) return [`content type ${contentType} is not declared for ${status} (${Object.keys(declared.content).join(', ')})`];
      if (media !== 'application/json') return [];
      const v = compiled(false, pointer('paths', path, method.toLowerCase(), 'responses', String(status), 'content', media, 'schema'));
      return v(body) ? [] : errorsOf(v).map((e) => `${status} body${e}`);
    },
  };
}
