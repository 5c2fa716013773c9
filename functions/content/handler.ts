import { spendWriteBudget } from '#app/write-budget.ts';
import { currentPage } from '#app/pages.ts';
import { createHttpHandler, type GroupOperations } from '#http/http-handler.ts';
import { pathExternalId, type CurrentStatesOf } from '#http/dry-run.ts';
import { listPages } from './routes/list-pages.ts';
import { savePage } from './routes/save-page.ts';
import { publishPage } from './routes/publish-page.ts';
import { unpublishPage } from './routes/unpublish-page.ts';

/** Content pages and blog posts: GET /content/pages (content:read), PUT, publish, unpublish (content:write). */
export const operations = { listPages, savePage, publishPage, unpublishPage } satisfies GroupOperations<'content'>;

/** What each write addresses as stored now, for its dry run: a save answers the draft, publish and unpublish the page. */
export const currentStates = {
  savePage: (ctx, i) => currentPage(ctx, i.principal, pathExternalId(i), true),
  publishPage: (ctx, i) => currentPage(ctx, i.principal, pathExternalId(i), false),
  unpublishPage: (ctx, i) => currentPage(ctx, i.principal, pathExternalId(i), false),
} satisfies CurrentStatesOf<'content'>;

// Pure: the MCP server imports this module for its operations only, and its bundle leaves out this Lambda.
export const handler = /* @__PURE__ */ createHttpHandler('content', operations, { spendWriteBudget, currentStates });
