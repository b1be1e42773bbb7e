/** A small fetch client for tests: JSON in and out, a cookie jar, optional Bearer and Origin. */
export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  bearer?: string;
  /** Raw body (sent as is); otherwise `json` is serialised. */
  raw?: string | Uint8Array;
  /** Override the client's Origin for this request (null = none). */
  origin?: string | null;
}

export class HttpClient {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly baseUrl: string,
    private readonly origin: string | null,
  ) {}

  async request<T = any>(method: string, path: string, json?: unknown, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const origin = options.origin === undefined ? this.origin : options.origin;
    if (origin) headers.origin ??= origin;
    if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
    if (this.cookies.size > 0 && !options.bearer) {
      headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    }
    let body: string | Uint8Array | undefined = options.raw;
    if (body === undefined && json !== undefined) {
      body = JSON.stringify(json);
      headers['content-type'] ??= 'application/json';
    }
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path.startsWith('/api/') || !path.startsWith('/') ? '' : '/api/v1'}${path}`;
    const res = await fetch(url, { method, headers, body, redirect: 'manual' });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, undefined, options);
  }
  post<T = any>(path: string, json?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, json ?? {}, options);
  }
  patch<T = any>(path: string, json?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', path, json ?? {}, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, undefined, options);
  }
}
