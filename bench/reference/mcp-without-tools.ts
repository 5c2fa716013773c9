/**
 * functions/mcp/handler.ts without its tools: everything that module imports but ./server.ts
 * (the tools, their schemas and the route functions they call), with the SDK's Server in its
 * place, bundled as a Lambda is (`npm run bench`, section bundles). What the MCP function would
 * import with no tool at all: the official MCP SDK, and the HTTP layer every API
 * function has (middy, the middlewares, Powertools logging and metrics, the key's allowance).
 */
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import {
  createMcpHandler,
  isLegacyRequest,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { authorizedKey, bodyText, internal, resolveRoute, responseShaper } from '#http/middlewares.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '#domain/text.ts';
import { absoluteUrl, instrument, NO_EARLY_TIMEOUT } from '#http/http-handler.ts';
import { DomainError } from '#domain/errors.ts';
import { json } from '#http/response.ts';
import { invalidParamsAnswer } from '#functions/mcp/message-check.ts';
import { isForeignOrigin } from '#http/origin.ts';
import { claimAllowance, isSetUp } from '#functions/mcp/allowance.ts';

export const used = [
  middy,
  httpHeaderNormalizer,
  createMcpHandler,
  isLegacyRequest,
  Server,
  WebStandardStreamableHTTPServerTransport,
  authorizedKey,
  bodyText,
  internal,
  resolveRoute,
  responseShaper,
  MAX_JSON_DEPTH,
  nestsDeeperThan,
  absoluteUrl,
  instrument,
  NO_EARLY_TIMEOUT,
  DomainError,
  json,
  invalidParamsAnswer,
  isForeignOrigin,
  claimAllowance,
  isSetUp,
];
