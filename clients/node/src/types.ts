// Type helpers that read an operation's query, body and answer out of the
// generated schema (src/schema.ts), so every method's types follow
// /openapi.json; plus short names for the API's main objects.

import type { components, operations } from './schema.js';

export type Schemas = components['schemas'];
export type Operations = operations;

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type OkStatus = 200 | 201 | 202 | 204;

/** The success body (or bodies) of operation K; `undefined` for a 204. */
export type Result<K extends keyof operations> = {
  [S in keyof operations[K]['responses'] & OkStatus]: S extends 204 ? undefined : Json<operations[K]['responses'][S]>;
}[keyof operations[K]['responses'] & OkStatus];

/** The JSON request body of operation K. */
export type Body<K extends keyof operations> = operations[K] extends { requestBody?: infer RB } ? Json<NonNullable<RB>> : never;

/** The query parameters of operation K; a `"true" | "false"` flag takes a boolean too. */
export type Query<K extends keyof operations> = Loose<NonNullable<operations[K]['parameters']['query']>>;

type Loose<Q> = { [P in keyof Q]: NonNullable<Q[P]> extends 'true' | 'false' ? Q[P] | boolean : Q[P] };

export type User = Schemas['User'];
export type UserInput = Schemas['UserInput'];
export type Erasure = Schemas['Erasure'];
export type Preferences = Schemas['Preferences'];
export type PreferencesInput = Schemas['PreferencesInput'];
export type FeedEntry = Schemas['FeedEntry'];
export type FeedPage = Schemas['FeedPage'];
export type Category = Schemas['Category'];
export type Channel = Schemas['Channel'];
export type ChannelInput = Schemas['ChannelInput'];
export type Flow = Schemas['Flow'];
export type FlowInput = Schemas['FlowInput'];
export type FlowUpdate = Schemas['FlowUpdate'];
export type FlowRun = Schemas['FlowRun'];
export type FlowRunAccepted = Schemas['FlowRunAccepted'];
export type RunInput = Schemas['RunInput'];
export type FlowPreview = Schemas['FlowPreview'];
export type Notification = Schemas['Notification'];
export type NotificationTrace = Schemas['NotificationTrace'];
export type Delivery = Schemas['Delivery'];
export type Topic = Schemas['Topic'];
export type Subscription = Schemas['Subscription'];
export type Suppression = Schemas['Suppression'];
export type SuppressionInput = Schemas['SuppressionInput'];
export type Partial = Schemas['Partial'];
export type Layout = Schemas['Layout'];
export type Translation = Schemas['Translation'];
export type TranslationSummary = Schemas['TranslationSummary'];
export type Project = Schemas['Project'];
export type ProjectUpdate = Schemas['ProjectUpdate'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type EventAttempt = Schemas['EventAttemptView'];
export type ErrorBody = Schemas['ErrorBody'];
