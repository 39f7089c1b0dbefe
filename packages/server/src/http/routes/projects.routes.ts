import type { Schemas } from '@pipewright/types';
import { type Request, Router } from 'express';
import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';
import { pageRequest } from '../pagination.js';

const nameOf = (req: Request) => (req.body as Schemas['ProjectData']).name;

export function projectRoutes({ projects }: Services): Router {
  return Router()
    .get('/projects', function listProjects(req, res) {
      res.json(projects.list(principalOf(res), pageRequest(req)));
    })
    .post('/projects', function createProject(req, res) {
      res.status(201).json(projects.create(principalOf(res), nameOf(req)));
    })
    .get('/projects/id/:id', function getProject(req, res) {
      res.json(projects.get(principalOf(res), req.params.id as string));
    })
    .put('/projects/id/:id', function updateProject(req, res) {
      res.json(projects.rename(principalOf(res), req.params.id as string, nameOf(req)));
    })
    .delete('/projects/id/:id', function deleteProject(req, res) {
      projects.delete(principalOf(res), req.params.id as string);
      res.status(204).end();
    })
    .get('/projects/name/:name', function getProjectByName(req, res) {
      res.json(projects.getByName(principalOf(res), req.params.name as string));
    })
    .get('/projects/:name', function getProjectByNameShortForm(req, res) {
      res.json(projects.getByName(principalOf(res), req.params.name as string));
    });
}
