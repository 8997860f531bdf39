import { Module } from '@nestjs/common';
import { InProcessTransport, WEFT_CONFIG, type WeftConfig } from '@weft/platform';
import { AuthService } from './auth.service.js';
import { KEY_REVOCATIONS, LocalKeyRevocations, RedisKeyRevocations } from './key-revocations.js';
import { RolesGuard } from './roles.guard.js';

/**
 * API-key authentication; its TenantRepository and WEFT_CONFIG come from the global CoreModule.
 * KEY_REVOCATIONS, the broadcast of revoked keys between API processes, is Redis at
 * WEFT_CONFIG.redisUrl (override it to test without Redis), or this process alone when CoreModule
 * has an InProcessTransport (`weft dev` without Redis: one API process).
 */
@Module({
  providers: [
    AuthService,
    RolesGuard,
    {
      provide: KEY_REVOCATIONS,
      inject: [WEFT_CONFIG, { token: InProcessTransport, optional: true }],
      useFactory: (config: WeftConfig, local?: InProcessTransport) => (local ? new LocalKeyRevocations() : new RedisKeyRevocations(config.redisUrl)),
    },
  ],
  exports: [AuthService, RolesGuard],
})
export class AuthModule {}
