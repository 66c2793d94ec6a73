import { bindingSchema, catalogSchema, resourceGroupSchema } from '@icepack/types';
import { z } from 'zod';
import { GROUP_STEPS, GroupPhase, StepState } from '../domain/group-record.ts';

type Schema = Record<string, unknown>;

/** A zod schema as an OpenAPI 3.1 (JSON Schema 2020-12) component. */
function component(schema: z.ZodType): Schema {
  const generated = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Schema;
  delete generated.$schema;
  return generated;
}

const secretRef: Schema = {
  description: 'A reference to a secret held elsewhere; Icepack never stores or logs the value.',
  oneOf: [
    {
      type: 'object',
      required: ['env'],
      additionalProperties: false,
      properties: { env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } },
    },
    {
      type: 'object',
      required: ['file'],
      additionalProperties: false,
      properties: { file: { type: 'string', pattern: '^/' } },
    },
    {
      type: 'object',
      required: ['secret'],
      additionalProperties: false,
      properties: {
        secret: {
          type: 'object',
          required: ['name', 'key'],
          properties: { name: { type: 'string' }, key: { type: 'string' } },
        },
      },
    },
  ],
};

/** The generated catalog schema leaves secret references open (they are refined in code); point them at SecretRef. */
function withSecretRefs(catalog: Schema): Schema {
  const auth = (catalog.properties as Record<string, Schema>).auth as { oneOf?: Schema[] };
  for (const option of auth.oneOf ?? []) {
    const props = option.properties as Record<string, Schema>;
    for (const key of ['token', 'clientSecret'])
      if (key in props) props[key] = { $ref: '#/components/schemas/SecretRef' };
  }
  return catalog;
}

const json = (schema: Schema) => ({ 'application/json': { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const error = (description: string) => ({ description, content: json(ref('Error')) });
const name = (what: string) => ({
  name: 'name',
  in: 'path',
  required: true,
  description: `${what} name`,
  schema: { type: 'string' },
});
const common = { '401': error('Missing or wrong bearer token') };

/** The OpenAPI document served at `/v1/openapi.json`. */
export function openApiDocument(): Schema {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Icepack provisioner',
      version: '1',
      description:
        'Catalogs and resource groups. Every path but this document needs `Authorization: Bearer <token>`. ' +
        'Errors are `{error, message}`; 400 adds `fields` (each invalid field with its path), 422 for capacity adds `requested`, `allocatable`, `reserved` and `free`.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths: {
      '/v1/catalogs': {
        get: {
          summary: 'List catalogs',
          responses: {
            '200': {
              description: 'Catalogs',
              content: json({ type: 'array', items: ref('CatalogView') }),
            },
            ...common,
          },
        },
        post: {
          summary:
            'Create a catalog; its connectivity (GET {uri}/v1/config) is checked and reported in status.connectivity',
          requestBody: { required: true, content: json(ref('Catalog')) },
          responses: {
            '201': { description: 'Created', content: json(ref('CatalogView')) },
            '400': error('Invalid body (fields named)'),
            '409': error('A catalog of that name exists'),
            ...common,
          },
        },
      },
      '/v1/catalogs/{name}': {
        parameters: [name('Catalog')],
        get: {
          summary: 'Get a catalog',
          responses: {
            '200': { description: 'The catalog', content: json(ref('CatalogView')) },
            '404': error('No such catalog'),
            ...common,
          },
        },
        put: {
          summary: 'Replace a catalog (not its name); a bound group gets the new configuration',
          requestBody: { required: true, content: json(ref('Catalog')) },
          responses: {
            '200': { description: 'Updated', content: json(ref('CatalogView')) },
            '400': error('Invalid body'),
            '404': error('No such catalog'),
            ...common,
          },
        },
        delete: {
          summary: 'Delete a catalog (tombstoned on icepack.catalogs)',
          responses: {
            '204': { description: 'Deleted' },
            '404': error('No such catalog'),
            '409': error('A resource group binds it'),
            ...common,
          },
        },
      },
      '/v1/resource-groups': {
        get: {
          summary: 'List resource groups with their status',
          responses: {
            '200': {
              description: 'Groups',
              content: json({ type: 'array', items: ref('ResourceGroupView') }),
            },
            ...common,
          },
        },
        post: {
          summary:
            'Create a resource group: persist, namespace, quota, limit range, config map, RBAC, ready, binding',
          requestBody: { required: true, content: json(ref('ResourceGroup')) },
          responses: {
            '201': { description: 'Created and ready', content: json(ref('ResourceGroupView')) },
            '202': {
              description:
                'Persisted; a step failed and the reconcile loop retries it (see status.steps)',
              content: json(ref('ResourceGroupView')),
            },
            '400': error('Invalid body (fields named), e.g. a name that is not DNS-1123'),
            '409': error('The name exists, or the catalog is bound to another group'),
            '422': {
              description:
                'The catalog does not exist, or cpu/memory do not fit the free capacity (figures given)',
              content: json(ref('CapacityError')),
            },
            ...common,
          },
        },
      },
      '/v1/resource-groups/{name}': {
        parameters: [name('Resource group')],
        get: {
          summary: 'Get a resource group and each step of its provisioning',
          responses: {
            '200': { description: 'The group', content: json(ref('ResourceGroupView')) },
            '404': error('No such group'),
            ...common,
          },
        },
        delete: {
          summary:
            'Delete a resource group: drain (binding → draining, wait for running tasks, cancel at the timeout), delete the namespace, tombstone the binding',
          responses: {
            '202': {
              description: 'Deletion started; GET answers 404 once done',
              content: json(ref('ResourceGroupView')),
            },
            '404': error('No such group'),
            ...common,
          },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        SecretRef: secretRef,
        Catalog: withSecretRefs(component(catalogSchema)),
        ResourceGroup: component(resourceGroupSchema),
        Binding: component(bindingSchema),
        CatalogView: {
          allOf: [
            ref('Catalog'),
            {
              type: 'object',
              properties: {
                status: {
                  type: 'object',
                  properties: {
                    connectivity: {
                      type: 'object',
                      properties: {
                        ok: { type: 'boolean' },
                        checkedAt: { type: 'string' },
                        status: { type: 'integer' },
                        message: { type: 'string' },
                      },
                    },
                    published: { type: 'boolean' },
                    group: { type: 'string', description: 'The resource group bound to it' },
                  },
                },
              },
            },
          ],
        },
        ResourceGroupView: {
          allOf: [
            ref('ResourceGroup'),
            {
              type: 'object',
              properties: {
                status: {
                  type: 'object',
                  properties: {
                    phase: { enum: Object.values(GroupPhase) },
                    mode: { enum: ['kubernetes', 'local'] },
                    namespace: { type: 'string' },
                    steps: {
                      type: 'array',
                      items: {
                        type: 'object',
                        properties: {
                          name: { enum: GROUP_STEPS },
                          state: { enum: Object.values(StepState) },
                          at: { type: 'string' },
                          message: { type: 'string' },
                        },
                      },
                    },
                    drainStartedAt: { type: 'string' },
                    runningTasks: { type: 'integer' },
                  },
                },
              },
            },
          ],
        },
        Error: {
          type: 'object',
          required: ['error', 'message'],
          properties: {
            error: { type: 'string' },
            message: { type: 'string' },
            fields: {
              type: 'array',
              items: {
                type: 'object',
                properties: { path: { type: 'string' }, message: { type: 'string' } },
              },
            },
          },
        },
        CapacityError: {
          allOf: [
            ref('Error'),
            {
              type: 'object',
              properties: Object.fromEntries(
                ['requested', 'allocatable', 'reserved', 'free'].map((key) => [
                  key,
                  {
                    type: 'object',
                    properties: { cpu: { type: 'string' }, memory: { type: 'string' } },
                  },
                ]),
              ),
            },
          ],
        },
      },
    },
  };
}
