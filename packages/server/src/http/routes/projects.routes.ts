import type { Schemas } from '@pipewright/types';
import type { Request } from 'express';
import type { Services } from '../../services/index.js';
import { principalOf } from '../context.js';
import type { Handlers } from '../dispatch.js';
import { pageRequest } from '../pagination.js';

const nameOf = (req: Request) => (req.body as Schemas['ProjectData']).name;

export function projectRoutes({ projects }: Services): Handlers {
  return {
    async listProjects(req, res) {
      res.json(await projects.list(principalOf(res), pageRequest(req)));
    },
    async createProject(req, res) {
      res.status(201).json(await projects.create(principalOf(res), nameOf(req)));
    },
    async getProject(req, res) {
      res.json(await projects.get(principalOf(res), req.params.id as string));
    },
    async updateProject(req, res) {
      res.json(await projects.rename(principalOf(res), req.params.id as string, nameOf(req)));
    },
    async deleteProject(req, res) {
      await projects.delete(principalOf(res), req.params.id as string);
      res.status(204).end();
    },
    async getProjectByName(req, res) {
      res.json(await projects.getByName(principalOf(res), req.params.name as string));
    },
    async getProjectByNameShortForm(req, res) {
      res.json(await projects.getByName(principalOf(res), req.params.name as string));
    },
  };
}
