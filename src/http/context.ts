// What Kiln knows about a request's host once the hosts hook has run. Who is asking is `req.caller`
// (src/http/auth.ts), and nothing else.

export type HostInfo =
  | { kind: 'main' }
  /** `<username>.<root_domain>`: the documents of one account. */
  | { kind: 'account'; accountId: number; username: string; suspended?: boolean }
  /** An active custom domain pointing at an account. */
  | { kind: 'domain'; accountId: number; username: string; domain: string; suspended?: boolean };

declare module 'fastify' {
  interface FastifyRequest {
    site: HostInfo;
  }
}
