// A real OpenID provider on loopback for tests/mcp/test_oauth.py: oidc-provider (an
// OpenID Certified library) with its development login pages, issuing access tokens for
// the folio server under test (RFC 8707 resource indicators).
//
// Usage: node provider.mjs PORT KEYS.json
//   PORT      where to listen on 127.0.0.1 (the issuer is http://127.0.0.1:PORT)
//   KEYS.json a private JWK set: the first key signs, every key is published (a rotation
//             is a restart with a new set)
// Clients name the resource (folio's http://127.0.0.1:N/mcp) in every token request; the
// token's aud is that resource. Prints "ready" on stdout once it listens.
//
// Clients (secrets are the client id + "-secret"):
//   agent-rw, agent-read, agent-contribute, agent-other: client credentials, JWT access
//     tokens with the scopes read-write / read / contribute / other (none of folio's);
//   agent-opaque: client credentials, opaque access tokens (for introspection);
//   folio-introspector: the client folio introspects as;
//   web-client: a public client, authorization code with PKCE, redirect to
//     http://127.0.0.1/callback.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const [port, keysFile] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const jwks = JSON.parse(readFileSync(keysFile, 'utf8'));
const scopes = 'read contribute read-write other';
const credentialsClient = (id, scope) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  ...(scope ? { scope } : {}),
});

const provider = new Provider(issuer, {
  jwks,
  clients: [
    credentialsClient('agent-rw', 'read contribute read-write'),
    credentialsClient('agent-read', 'read'),
    credentialsClient('agent-contribute', 'read contribute'),
    credentialsClient('agent-other', 'other'),
    credentialsClient('agent-opaque', 'read'),
    credentialsClient('folio-introspector', ''),
    {
      client_id: 'web-client',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1/callback'],
      scope: `openid ${scopes}`,
    },
  ],
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  scopes: ['openid', 'read', 'contribute', 'read-write', 'other'],
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: {
      enabled: true,
      allowedPolicy: async (ctx, client) => client.clientId === 'folio-introspector',
    },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, indicator, client) => ({
        scope: scopes,
        audience: indicator,
        accessTokenTTL: 300,
        accessTokenFormat: client.clientId === 'agent-opaque' ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  pkce: { required: () => true },
});
provider.on('server_error', (ctx, err) => console.error('server_error', err));

provider.listen(Number(port), '127.0.0.1', () => {
  console.log('ready');
});
