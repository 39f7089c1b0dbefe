import type { Schemas } from '@pipewright/types';
import type { Request } from 'express';
import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

const nameOf = (req: Request) => (req.body as Schemas['ProjectData']).name;

export function projectRoutes({ projects }: Services): Handlers {
  return {
    listProjects(req, res) {
      res.json(projects.list(principalOf(res), pageRequest(req)));
    },
    createProject(req, res) {
      res.status(201).json(projects.create(principalOf(res), nameOf(req)));
    },
    getProject(req, res) {
      res.json(projects.get(principalOf(res), req.params.id as string));
    },
    updateProject(req, res) {
      res.json(projects.rename(principalOf(res), req.params.id as string, nameOf(req)));
    },
    deleteProject(req, res) {
      projects.delete(principalOf(res), req.params.id as string);
      res.status(204).end();
    },
    getProjectByName(req, res) {
      res.json(projects.getByName(principalOf(res), req.params.name as string));
    },
    getProjectByNameShortForm(req, res) {
      res.json(projects.getByName(principalOf(res), req.params.name as string));
    },
  };
}
