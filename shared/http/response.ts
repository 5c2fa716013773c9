import type { APIGatewayProxyResult } from 'aws-lambda';

export interface RouteResult {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}
