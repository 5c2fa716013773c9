import type { APIGatewayProxyResult } from 'aws-lambda';
import { AppError } from './app-error.ts';

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

export function errorBody(err: AppError) {
  return { code: err.code, message: err.message, field: err.field };
}

export function errorResponse(err: AppError, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return json(err.status, errorBody(err), { ...err.headers, ...headers });
}
