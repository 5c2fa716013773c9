/**
 * IAM for the rehearsal: each request check is evaluated with `@cloud-copilot/iam-simulate`
 * against the calling function's identity policies and the resource's own policy (a queue
 * policy), with the request context a Lambda call carries in AWS (HTTPS, the role session as
 * principal, the region). Decisions are cached per (function, check): the policies never change
 * while the stack runs.
 */
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import type { AuthorizationCheck } from './aws-requests.ts';
import type { FunctionSpec, PolicyDocument } from './functions.ts';

export interface Decision {
  allowed: boolean;
  /** 'Allowed', 'ImplicitlyDenied', 'ExplicitlyDenied', or the simulator's validation error. */
  result: string;
  /** Whether the caller's own policies allowed it (a denial then is the resource policy's: a role's trust). */
  identityAllowed: boolean;
}

export interface Denial {
  function: string;
  action: string;
  resource: string;
  result: string;
  context: Record<string, string | string[]>;
}

/**
 * Who makes a call: a function's role (its session named after the function), or a session of an
 * integrator's role that the signer assumed (SQS and EventBridge destinations), in that account.
 */
export type Caller = Pick<FunctionSpec, 'key' | 'name' | 'roleArn' | 'policies'> & { account?: string };

export class IamEvaluator {
  private readonly cache = new Map<string, Promise<Decision>>();

  constructor(
    private readonly account: string,
    private readonly region: string,
  ) {}

  decide(fn: Caller, check: AuthorizationCheck, resourcePolicy?: PolicyDocument): Promise<Decision> {
    const key = JSON.stringify([fn.key, check, resourcePolicy ?? null]);
    let decision = this.cache.get(key);
    if (!decision) {
      decision = this.simulate(fn, check, resourcePolicy);
      this.cache.set(key, decision);
      if (this.cache.size > 5000) this.cache.delete(this.cache.keys().next().value!);
    }
    return decision;
  }

  private async simulate(fn: Caller, check: AuthorizationCheck, resourcePolicy?: PolicyDocument): Promise<Decision> {
    const roleName = fn.roleArn.split('/').pop();
    const account = fn.account ?? this.account;
    // A cross-account resource (an integrator's role) is in the account its ARN names.
    const resourceAccount = /^arn:[\w-]+:[\w-]+:[\w-]*:(\d{12}):/.exec(check.resource)?.[1] ?? this.account;
    const simulation: Simulation = {
      identityPolicies: fn.policies.map((p) => ({ name: p.name, policy: p.document })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy ? { resourcePolicy } : {}),
      request: {
        action: check.action,
        principal: `arn:aws:sts::${account}:assumed-role/${roleName}/${fn.name}`,
        resource: { resource: check.resource, accountId: resourceAccount },
        contextVariables: {
          'aws:SecureTransport': 'true',
          'aws:PrincipalArn': fn.roleArn,
          'aws:PrincipalAccount': account,
          'aws:ResourceAccount': resourceAccount,
          'aws:RequestedRegion': this.region,
          'aws:CurrentTime': new Date().toISOString(),
          ...check.context,
        },
      },
    } as Simulation;
    const out = await runSimulation(simulation, {});
    if (out.resultType === 'error')
      return { allowed: false, result: `simulation error: ${out.errors.message}`, identityAllowed: false };
    const identity = (out as { result?: { analysis?: { identityAnalysis?: { result?: string } } } }).result?.analysis
      ?.identityAnalysis?.result;
    return {
      allowed: out.overallResult === 'Allowed',
      result: out.overallResult,
      identityAllowed: identity === 'Allowed',
    };
  }
}
