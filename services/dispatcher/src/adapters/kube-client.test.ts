import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { kubeConfigFor, startFakeKubeApi } from '@icepack/test/k8s';
import { describe, expect, it } from 'vitest';
import { SPARK_API } from '../runners/spark-application.ts';
import { kubeClients } from './kube-client.ts';

describe('kubeClients', () => {
  it('reuses connections across calls and API clients of one KubeConfig, and still authenticates each call', async () => {
    const api = await startFakeKubeApi({ token: 'secret-token' });
    try {
      const kc = kubeConfigFor(api.url, 'secret-token');
      const core = kubeClients(kc).make(CoreV1Api);
      const custom = kubeClients(kc).make(CustomObjectsApi);
      await core.createNamespace({ body: { metadata: { name: 'team' } } });
      for (let i = 0; i < 20; i += 1) {
        await core.listNamespacedResourceQuota({ namespace: 'team' });
        await custom.listNamespacedCustomObject({ ...SPARK_API, namespace: 'team' });
      }
      // 41 calls, one after the other: one connection (a second if the server closed one).
      expect(api.connections()).toBeLessThanOrEqual(2);
      // Without the token the fake answers 401: each call carried it.
      const anonymous = kubeClients(kubeConfigFor(api.url)).make(CoreV1Api);
      await expect(anonymous.listNamespace()).rejects.toMatchObject({ code: 401 });
    } finally {
      await api.stop();
    }
  });

  it('returns parsed objects, and the status code and message of a refused call', async () => {
    const api = await startFakeKubeApi();
    try {
      const core = kubeClients(kubeConfigFor(api.url)).make(CoreV1Api);
      const created = await core.createNamespace({ body: { metadata: { name: 'team' } } });
      expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
      const again = core.createNamespace({ body: { metadata: { name: 'team' } } });
      await expect(again).rejects.toMatchObject({ code: 409 });
      const missing = await core.readNamespace({ name: 'nobody' }).catch((e: unknown) => e);
      expect(missing).toMatchObject({ code: 404 });
      expect(JSON.parse(String((missing as { body: unknown }).body))).toMatchObject({
        reason: 'NotFound',
        message: 'namespaces "nobody" not found',
      });
    } finally {
      await api.stop();
    }
  });
});
