// The part of @pulumi/pulumi's declarations that the generated SDK declarations and the
// TypeScript example use, so `tsc` checks the example offline without the whole SDK.
declare module "@pulumi/pulumi" {
    export interface Output<T> {
        apply<U>(func: (value: T) => U | Promise<U> | Output<U>): Output<U>;
    }
    export type Input<T> = T | Promise<T> | Output<T>;
    export interface ComponentResourceOptions {
        parent?: ComponentResource;
        dependsOn?: ComponentResource | ComponentResource[];
        protect?: boolean;
    }
    export class ComponentResource {
        constructor(type: string, name: string, args?: object, opts?: ComponentResourceOptions);
    }
}
