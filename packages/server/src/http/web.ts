import { join, resolve } from 'node:path';
import express, { type RequestHandler, type Response } from 'express';
import { DomainError } from '../domain/errors.js';

/**
 * Everything the dashboard loads comes from this origin, and nothing runs inline: its scripts
 * and styles are files, its data comes from /v0. No frame may hold it.
 */
export const DASHBOARD_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': DASHBOARD_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

/** Vite names the files under assets/ by their content: they never change, and are cached for a year. */
const HASHED_ASSET = /^\/assets\//;

/** A path whose last segment has an extension asks for a file, never for a page of the app. */
const FILE_PATH = /\/[^/]*\.[^/]*$/;

function isApiPath(path: string): boolean {
  return path === '/v0' || path.startsWith('/v0/');
}

function setSecurityHeaders(res: Response): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
}

/**
 * Serves the built dashboard (a directory holding index.html and assets/) at `/`, on the same
 * origin as the API, with a strict Content-Security-Policy. Any other path that names no file
 * is a route of the app, answered with index.html; paths under /v0 are never touched, and
 * neither are methods other than GET and HEAD. The files are public: signing in happens in the
 * app, with an API key it sends to /v0.
 */
export function webDashboard(directory: string): RequestHandler {
  const root = resolve(directory);
  const files = express.static(root, {
    index: false,
    redirect: false,
    setHeaders(res, path) {
      const hashed = HASHED_ASSET.test(path.slice(root.length).replaceAll('\\', '/'));
      res.setHeader('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  const page = join(root, 'index.html');
  return (req, res, next) => {
    if (isApiPath(req.path) || (req.method !== 'GET' && req.method !== 'HEAD')) {
      next();
      return;
    }
    setSecurityHeaders(res);
    files(req, res, (error?: unknown) => {
      if (error) {
        next(error);
        return;
      }
      if (FILE_PATH.test(req.path)) {
        next(new DomainError('route_not_found', `no file ${req.path}`, { target: req.path }));
        return;
      }
      res.setHeader('Cache-Control', 'no-cache');
      res.sendFile(page, (sendError?: Error) => {
        if (sendError && !res.headersSent) next(sendError);
      });
    });
  };
}
