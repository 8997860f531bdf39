import { Module } from '@nestjs/common';
import { AuthService } from './auth.service.js';
import { RolesGuard } from './roles.guard.js';

/** API-key authentication; its TenantRepository comes from the global CoreModule. */
@Module({ providers: [AuthService, RolesGuard], exports: [AuthService, RolesGuard] })
export class AuthModule {}
