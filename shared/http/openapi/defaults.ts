/** The server the committed document names: the local stack's default address. */
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:3000/api/v1/integrations';
