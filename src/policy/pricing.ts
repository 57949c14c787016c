import { z } from 'zod';

/**
 * What an hour of a workspace costs, to estimate what pausing it saved: by the API's
 * `workspace_type.typeName`, with a default for the types the table leaves out.
 */
export const PricingSchema = z
  .strictObject({
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'expected a three-letter currency code such as EUR or USD')
      .meta({ description: 'ISO 4217 code the prices are in.' }),
    perHour: z
      .record(z.string().min(1), z.number().nonnegative())
      .default({})
      .meta({ description: 'Price of one hour by workspace_type.typeName, e.g. { "TG-8": 1.20 }.' }),
    default: z
      .number()
      .nonnegative()
      .optional()
      .meta({ description: 'Price of one hour of a type perHour does not list; unset: not priced.' }),
  })
  .meta({
    description:
      'Prices that turn the hours nightshift kept workspaces paused into an estimated cost avoided (nightshift savings).',
  });
export type Pricing = z.output<typeof PricingSchema>;
