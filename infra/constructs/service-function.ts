import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Charset, NodejsFunction, OutputFormat, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { grantTableAccess, TABLE_ACCESS, type TableUser } from '../table-access.ts';
import { METRICS_NAMESPACE } from '../metric-names.ts';
import { acknowledgeFunction } from '../nag-acknowledgements.ts';
import { aliasArgs, FUNCTION_MEMORY_MB, LAMBDA_BUNDLING, LOG_PLATFORM_LINES, REQUIRE_BANNER } from '../bundling.ts';

/** Path of a handler module from the repository root, for NodejsFunction's `entry`. */
export const entry = (relative: string) => fileURLToPath(new URL(`../../${relative}`, import.meta.url));

export interface ServiceFunctionProps extends NodejsFunctionProps {
  entryPath: string;
  /** Powertools service name (`service` on every log line and metric). */
  service: string;
}

/**
 * The defaults every Lambda of the service shares: Node 22 on arm64, ESM bundles minified by
 * esbuild with the AWS SDK left to the runtime (smaller bundles, faster cold starts), JSON logs
 * kept for a month, active X-Ray tracing, the Powertools service and metrics namespace, and
 * `bindTable()` to grant exactly the table actions a function's code sends (infra/table-access.ts).
 */
export class ServiceFunction extends NodejsFunction {
  readonly entryPath: string;
  readonly service: string;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const { entryPath, service, environment, ...rest } = props;
    super(scope, id, {
      entry: entry(entryPath),
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: FUNCTION_MEMORY_MB,
      timeout: Duration.seconds(10),
      tracing: lambda.Tracing.ACTIVE,
      logGroup: new logs.LogGroup(scope, `${id}Logs`, { retention: logs.RetentionDays.ONE_MONTH }),
      loggingFormat: lambda.LoggingFormat.JSON,
      // The platform's start and report lines are INFO (infra/bundling.ts, LOG_PLATFORM_LINES).
      systemLogLevelV2: LOG_PLATFORM_LINES ? lambda.SystemLogLevel.INFO : lambda.SystemLogLevel.WARN,
      environment: {
        POWERTOOLS_SERVICE_NAME: service,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        ...environment,
      },
      // infra/bundling.ts says why each of these.
      bundling: {
        format: OutputFormat.ESM,
        target: LAMBDA_BUNDLING.target,
        minify: LAMBDA_BUNDLING.minify,
        charset: Charset.UTF8,
        sourceMap: true,
        sourcesContent: LAMBDA_BUNDLING.sourcesContent,
        externalModules: [...LAMBDA_BUNDLING.external],
        // Stack traces mapped through the source map when first printed, not parsed at every cold start.
        inject: [...LAMBDA_BUNDLING.inject],
        banner: REQUIRE_BANNER,
        // Packages replaced by the one module used or by a stub for code never run (infra/bundling.ts).
        esbuildArgs: aliasArgs(),
      },
      ...rest,
    });
    this.entryPath = entryPath;
    this.service = service;
    acknowledgeFunction(this);
  }

  /** TABLE_NAME and the table actions `user` is listed with in TABLE_ACCESS. */
  bindTable(table: dynamodb.ITable, user: TableUser): this {
    this.addEnvironment('TABLE_NAME', table.tableName);
    grantTableAccess(this, table, TABLE_ACCESS[user]);
    return this;
  }
}
