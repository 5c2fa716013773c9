import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { NodejsFunction, OutputFormat, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';

/** Path of a handler module from the repository root, for NodejsFunction's `entry`. */
export const entry = (relative: string) => fileURLToPath(new URL(`../../${relative}`, import.meta.url));

/**
 * The defaults every Lambda of the service shares: Node 22 on arm64, ESM bundles minified by
 * esbuild with the AWS SDK left to the runtime (smaller bundles, faster cold starts), JSON logs
 * kept for a month, and `bindTable()` to grant exactly the table access a function needs.
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: NodejsFunctionProps & { entryPath: string }) {
    const { entryPath, environment, ...rest } = props;
    super(scope, id, {
      entry: entry(entryPath),
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(10),
      logGroup: new logs.LogGroup(scope, `${id}Logs`, { retention: logs.RetentionDays.ONE_MONTH }),
      loggingFormat: lambda.LoggingFormat.JSON,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...environment },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node20',
        minify: true,
        sourceMap: true,
        externalModules: ['@aws-sdk/*'],
        // ESM bundles need a require shim for the few CommonJS dependencies.
        banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
      },
      ...rest,
    });
  }

  bindTable(table: dynamodb.ITable, access: 'read' | 'readWrite'): this {
    this.addEnvironment('TABLE_NAME', table.tableName);
    if (access === 'read') table.grantReadData(this);
    else table.grantReadWriteData(this);
    return this;
  }
}
