/**
 * CloudFormation intrinsic functions over the rehearsal's own physical resources: `Ref`,
 * `Fn::GetAtt`, `Fn::ImportValue` (cross-stack exports), `Fn::Join`, `Fn::Select`, `Fn::Split`,
 * `Fn::Sub` and the pseudo parameters. A reference to a resource the rehearsal does not model
 * stays visible as `<unresolved:Stack/Id>` rather than turning into a plausible wrong value.
 */
import { keyOf, type Assembly, type Json } from './template.ts';

export interface Physical {
  ref: string;
  attributes: Record<string, string>;
}

export class Resolver {
  private readonly physical = new Map<string, Physical>();
  private readonly exports = new Map<string, Json>();

  constructor(private readonly assembly: Assembly) {}

  define(stack: string, id: string, value: Physical): void {
    this.physical.set(keyOf(stack, id), value);
  }

  lookup(stack: string, id: string): Physical | undefined {
    return this.physical.get(keyOf(stack, id));
  }

  /** Call once every resource an export names is defined. */
  collectExports(): void {
    for (const { stackName, template } of this.assembly.stacks) {
      for (const output of Object.values(template.Outputs ?? {})) {
        if (output.Export)
          this.exports.set(String(this.resolve(stackName, output.Export.Name)), this.resolve(stackName, output.Value));
      }
    }
  }

  private pseudo(name: string, stack: string): string | undefined {
    const { region, account } = this.assembly;
    const values: Record<string, string> = {
      'AWS::Region': region,
      'AWS::AccountId': account,
      'AWS::Partition': 'aws',
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackName': stack,
      'AWS::StackId': `arn:aws:cloudformation:${region}:${account}:stack/${stack}/rehearsal`,
      'AWS::NoValue': '',
    };
    return values[name];
  }

  private ref(stack: string, name: string): string {
    return this.pseudo(name, stack) ?? this.physical.get(keyOf(stack, name))?.ref ?? `<unresolved:${stack}/${name}>`;
  }

  private getAtt(stack: string, id: string, attribute: string): string {
    return this.physical.get(keyOf(stack, id))?.attributes[attribute] ?? `<unresolved:${stack}/${id}.${attribute}>`;
  }

  resolve(stack: string, value: Json): Json {
    if (Array.isArray(value)) return value.map((v) => this.resolve(stack, v));
    if (value === null || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    if (keys.length === 1) {
      const [fn] = keys as [string];
      const arg = value[fn] as Json;
      const str = (v: Json) => String(this.resolve(stack, v));
      switch (fn) {
        case 'Ref':
          return this.ref(stack, String(arg));
        case 'Fn::GetAtt': {
          const [id, attribute] = Array.isArray(arg) ? arg.map(String) : String(arg).split(/\.(.*)/s);
          return this.getAtt(stack, id ?? '', attribute ?? '');
        }
        case 'Fn::ImportValue': {
          const name = str(arg);
          return this.exports.has(name) ? this.exports.get(name)! : `<unresolved:import ${name}>`;
        }
        case 'Fn::Join': {
          const [sep, parts] = arg as [string, Json];
          return (this.resolve(stack, parts) as Json[]).map(String).join(sep);
        }
        case 'Fn::Select': {
          const [index, list] = arg as [Json, Json];
          return (this.resolve(stack, list) as Json[])[Number(this.resolve(stack, index))] ?? null;
        }
        case 'Fn::Split': {
          const [sep, source] = arg as [string, Json];
          return str(source).split(sep);
        }
        case 'Fn::Sub': {
          const [text, vars] = Array.isArray(arg) ? (arg as [string, Record<string, Json>]) : [String(arg), {}];
          return text.replace(/\$\{([^}!][^}]*)\}/g, (_m, name: string) => {
            if (name in vars) return str(vars[name] as Json);
            const [id, attribute] = name.split(/\.(.*)/s) as [string, string | undefined];
            return attribute ? this.getAtt(stack, id, attribute) : this.ref(stack, id);
          });
        }
      }
    }
    return Object.fromEntries(keys.map((k) => [k, this.resolve(stack, value[k] as Json)]));
  }
}
