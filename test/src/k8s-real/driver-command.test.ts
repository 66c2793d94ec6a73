import { describe, expect, it } from 'vitest';
import { driverCommand, localPath, parseSparkProperties } from './driver-command.ts';

const imagePaths = { '/opt/icepack/': '/src/icepack/' };

describe('driver pod → local spark-submit', () => {
  it('parses spark.properties as java.util.Properties text', () => {
    expect(
      parseSparkProperties(
        '#comment\nspark.app.name=ip-x\nspark.a = b=c\n\nspark.path=C:\\\\tmp\nspark.kubernetes.driver.label.x\\:y=1\n',
      ),
    ).toEqual({
      'spark.app.name': 'ip-x',
      'spark.a': 'b=c',
      'spark.path': 'C:\\tmp',
      'spark.kubernetes.driver.label.x:y': '1',
    });
  });

  it('maps paths inside the image to this checkout', () => {
    expect(localPath('local:///opt/icepack/jobs/spark/icepack_job.py', imagePaths)).toBe(
      '/src/icepack/jobs/spark/icepack_job.py',
    );
    expect(localPath('/elsewhere/x.jar', imagePaths)).toBe('/elsewhere/x.jar');
  });

  it('runs the main file with its arguments and the conf minus what names the cluster', () => {
    const command = driverCommand({
      args: [
        'driver',
        '--properties-file',
        '/opt/spark/conf/spark.properties',
        '--class',
        'org.apache.spark.deploy.PythonRunner',
        'local:///opt/icepack/jobs/spark/icepack_job.py',
        '--task-json',
        '{"id": "t 1"}',
      ],
      properties: {
        'spark.master': 'k8s://https://127.0.0.1:16443',
        'spark.submit.deployMode': 'cluster',
        'spark.kubernetes.namespace': 'ns',
        'spark.driver.memory': '8g',
        'spark.executor.cores': '2',
        'spark.executor.instances': '4',
        'spark.sql.shuffle.partitions': '8',
        'spark.jars': 'local:///opt/icepack/extra.jar',
      },
      imagePaths,
      sparkJars: '/cache/iceberg.jar',
      maxCores: 2,
      driverMemory: '1g',
    });
    expect(command.mainFile).toBe('local:///opt/icepack/jobs/spark/icepack_job.py');
    expect(command.appArgs).toEqual(['--task-json', '{"id": "t 1"}']);
    expect(command.conf).toEqual({
      'spark.executor.cores': '2',
      'spark.executor.instances': '4',
      'spark.sql.shuffle.partitions': '8',
      'spark.jars': '/src/icepack/extra.jar,/cache/iceberg.jar',
      'spark.ui.enabled': 'false',
    });
    expect(command.sparkSubmitArgs.slice(0, 4)).toEqual([
      '--master',
      'local[2]',
      '--driver-memory',
      '1g',
    ]);
    expect(command.sparkSubmitArgs.slice(-3)).toEqual([
      '/src/icepack/jobs/spark/icepack_job.py',
      '--task-json',
      '{"id": "t 1"}',
    ]);
    expect(command.sparkSubmitArgs).not.toContain('--class');
  });

  it('keeps a JVM main class and refuses args without an application file', () => {
    const jvm = driverCommand({
      args: ['driver', '--class', 'org.example.Main', 'local:///opt/app.jar'],
      properties: {},
      imagePaths,
      maxCores: 4,
      driverMemory: '512m',
    });
    expect(jvm.sparkSubmitArgs).toEqual([
      '--master',
      'local[1]',
      '--driver-memory',
      '512m',
      '--class',
      'org.example.Main',
      '--conf',
      'spark.ui.enabled=false',
      '/opt/app.jar',
    ]);
    expect(() =>
      driverCommand({
        args: ['driver'],
        properties: {},
        imagePaths,
        maxCores: 1,
        driverMemory: '1g',
      }),
    ).toThrow(/no application file/);
  });
});
